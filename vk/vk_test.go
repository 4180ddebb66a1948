package vk_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/spirv"
	"github.com/vkjit/vkjit/vk"
)

// scaleKernel builds out[i] = in[i] * 2 for i < n (n a push constant).
func scaleKernel() []uint32 {
	b := spirv.NewBuilder()
	f32 := b.TypeFloat(32)
	u32 := b.TypeInt(32, false)
	arr := b.TypeRuntimeArray(f32, 4)
	blk := b.TypeBlock([]spirv.ID{arr}, []uint32{0})
	ptrBlk := b.TypePointer(spirv.StorageStorageBuffer, blk)
	in := b.Variable(ptrBlk, spirv.StorageStorageBuffer)
	out := b.Variable(ptrBlk, spirv.StorageStorageBuffer)
	b.Decorate(in, spirv.DecorationDescriptorSet, 0)
	b.Decorate(in, spirv.DecorationBinding, 0)
	b.Decorate(out, spirv.DecorationDescriptorSet, 0)
	b.Decorate(out, spirv.DecorationBinding, 1)
	pc := b.TypeBlock([]spirv.ID{u32}, []uint32{0})
	pcVar := b.Variable(b.TypePointer(spirv.StoragePushConstant, pc), spirv.StoragePushConstant)
	v3 := b.TypeVector(u32, 3)
	gid := b.Variable(b.TypePointer(spirv.StorageInput, v3), spirv.StorageInput)
	b.Decorate(gid, spirv.DecorationBuiltIn, uint32(spirv.BuiltInGlobalInvocationID))
	void := b.TypeVoid()
	fn := b.Function(void, b.TypeFunction(void))
	fn.Label(0)
	g := fn.Op(spirv.OpLoad, v3, uint32(gid))
	i := fn.Op(spirv.OpCompositeExtract, u32, uint32(g), 0)
	np := fn.Op(spirv.OpAccessChain, b.TypePointer(spirv.StoragePushConstant, u32), uint32(pcVar), uint32(b.ConstU32(0)))
	n := fn.Op(spirv.OpLoad, u32, uint32(np))
	ok := fn.Op(spirv.OpULessThan, b.TypeBool(), uint32(i), uint32(n))
	body, merge := b.NewID(), b.NewID()
	fn.Void(spirv.OpSelectionMerge, uint32(merge), spirv.SelectionControlNone)
	fn.Void(spirv.OpBranchConditional, uint32(ok), uint32(body), uint32(merge))
	fn.Label(body)
	pf := b.TypePointer(spirv.StorageStorageBuffer, f32)
	zero := b.ConstU32(0)
	x := fn.Op(spirv.OpLoad, f32, uint32(fn.Op(spirv.OpAccessChain, pf, uint32(in), uint32(zero), uint32(i))))
	y := fn.Op(spirv.OpFMul, f32, uint32(x), uint32(b.ConstF32(2)))
	fn.Void(spirv.OpStore, uint32(fn.Op(spirv.OpAccessChain, pf, uint32(out), uint32(zero), uint32(i))), uint32(y))
	fn.Void(spirv.OpBranch, uint32(merge))
	fn.Label(merge)
	fn.Void(spirv.OpReturn)
	fn.End()
	b.EntryPoint(fn.ID, "main", gid)
	b.LocalSize(fn.ID, 64, 1, 1)
	return b.Words()
}

func TestDevicesAndDispatch(t *testing.T) {
	inst, err := vk.NewInstance(true)
	require.NoError(t, err)
	defer inst.Destroy()
	defer func() { require.Empty(t, vk.ValidationMessages()) }()

	devs, err := inst.Devices()
	require.NoError(t, err)
	require.NotEmpty(t, devs)
	idx, err := vk.ChooseDevice(devs, "")
	require.NoError(t, err)
	d := devs[idx]
	require.NotEmpty(t, d.Name)
	require.NotZero(t, d.SubgroupSize)
	require.NotEmpty(t, d.Heaps)
	t.Logf("device %d: %s (%s), driver %s, API %s, subgroup %d", idx, d.Name, d.Type, d.Driver(), d.APIVersion, d.SubgroupSize)

	dev, err := inst.OpenDevice(idx, vk.DeviceOptions{})
	require.NoError(t, err)
	defer dev.Destroy()

	const n = 1000 // not a multiple of the workgroup size
	in, err := dev.NewBuffer(4 * n)
	require.NoError(t, err)
	defer in.Destroy()
	out, err := dev.NewBuffer(4 * n)
	require.NoError(t, err)
	defer out.Destroy()
	src := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(float32(i)-0.5))
	}
	require.NoError(t, in.Write(0, src))

	k, err := dev.NewKernel("scale", scaleKernel(), 2, 4)
	require.NoError(t, err)
	defer k.Destroy()
	push := binary.LittleEndian.AppendUint32(nil, n)
	cl, err := dev.Record([]vk.Dispatch{{Kernel: k, Buffers: []*vk.Buffer{in, out}, Push: push, Groups: [3]uint32{(n + 63) / 64, 1, 1}}})
	require.NoError(t, err)
	defer cl.Destroy()
	for rep := 0; rep < 2; rep++ { // a recorded list replays
		require.NoError(t, cl.Submit(0))
		got := out.Bytes()
		for i := 0; i < n; i++ {
			v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
			require.Equal(t, 2*(float32(i)-0.5), v, "element %d", i)
		}
	}
}

func TestChooseDevice(t *testing.T) {
	devs := []vk.DeviceInfo{{Name: "llvmpipe (LLVM 15)", Type: vk.TypeCPU}, {Name: "NVIDIA H200", Type: vk.TypeDiscrete}, {Name: "Intel UHD", Type: vk.TypeIntegrated}}
	i, err := vk.ChooseDevice(devs, "")
	require.NoError(t, err)
	require.Equal(t, 1, i)
	i, err = vk.ChooseDevice(devs, "llvm")
	require.NoError(t, err)
	require.Equal(t, 0, i)
	i, err = vk.ChooseDevice(devs, "2")
	require.NoError(t, err)
	require.Equal(t, 2, i)
	_, err = vk.ChooseDevice(devs, "7")
	require.ErrorIs(t, err, vk.ErrNoDevice)
	_, err = vk.ChooseDevice(devs, "radeon")
	require.ErrorIs(t, err, vk.ErrNoDevice)
	_, err = vk.ChooseDevice(nil, "")
	require.ErrorIs(t, err, vk.ErrNoDevice)
}

// TestValidationCatchesMisuse proves the layer and callback are live: a
// push-constant range whose size is not a multiple of 4 is invalid
// (VUID-VkPushConstantRange-size-00297), and the layer must say so.
func TestValidationCatchesMisuse(t *testing.T) {
	inst, idx := validated(t)
	dev, err := inst.OpenDevice(idx, vk.DeviceOptions{})
	require.NoError(t, err)
	defer dev.Destroy()
	vk.ValidationMessages()
	k, err := dev.NewKernel("bad", scaleKernel(), 2, 6)
	if err == nil {
		k.Destroy()
	}
	msgs := vk.ValidationMessages()
	require.NotEmpty(t, msgs)
	require.Contains(t, msgs[0], "00297")
}

// TestPipelineCacheData: the device's own pipeline cache data loads back;
// data for another device, or too short for its header, is refused with
// the reason, and the device still gets an empty cache.
func TestPipelineCacheData(t *testing.T) {
	inst, err := vk.NewInstance(true)
	require.NoError(t, err)
	defer inst.Destroy()
	dev, err := inst.OpenDevice(0, vk.DeviceOptions{})
	require.NoError(t, err)
	defer dev.Destroy()
	require.NoError(t, dev.UsePipelineCache(nil))
	k, err := dev.NewKernel("scale", scaleKernel(), 2, 4)
	require.NoError(t, err)
	k.Destroy()
	data, err := dev.PipelineCacheData()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(data), 32, "at least the header")
	require.NoError(t, dev.UsePipelineCache(data), "the device's own data loads back")

	other := append([]byte(nil), data...)
	other[8] ^= 0xff // vendorID
	require.ErrorContains(t, dev.UsePipelineCache(other), "is for device")
	other = append([]byte(nil), data...)
	other[20] ^= 0xff // pipelineCacheUUID
	require.ErrorContains(t, dev.UsePipelineCache(other), "UUID")
	require.ErrorContains(t, dev.UsePipelineCache(data[:16]), "shorter than its header")
	k, err = dev.NewKernel("scale", scaleKernel(), 2, 4)
	require.NoError(t, err, "a refused data set still leaves a working cache")
	k.Destroy()
	require.Empty(t, vk.ValidationMessages())
}

// TestOpenDevicesUnderGC opens and closes devices on two goroutines
// while a third collects garbage without pause, as warming does beside
// a running program: the calls that pass arrays of structures to the
// driver must not lose their memory to a collection during the call
// (the bindings' own conversions did, and the heap was corrupted).
func TestOpenDevicesUnderGC(t *testing.T) {
	inst, idx := validated(t)
	stop := make(chan struct{})
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			for range 40 {
				d, err := inst.OpenDevice(idx, vk.DeviceOptions{})
				if err != nil {
					errs <- err
					return
				}
				d.Destroy()
			}
			errs <- nil
		}()
	}
	for range 2 {
		require.NoError(t, <-errs)
	}
	close(stop)
	<-gcDone
}

// validated opens an instance with the validation layer, destroyed when
// the test ends, and chooses the default device.
func validated(t *testing.T) (*vk.Instance, int) {
	inst, err := vk.NewInstance(true)
	require.NoError(t, err)
	t.Cleanup(inst.Destroy)
	devs, err := inst.Devices()
	require.NoError(t, err)
	idx, err := vk.ChooseDevice(devs, "")
	require.NoError(t, err)
	return inst, idx
}

// TestHugePagesAdvised: a CPU device's mapped buffer (process memory)
// is advised for transparent huge pages over its whole 2 MiB pages, as
// /proc/self/smaps reports of the mapping (VmFlags hg); other devices'
// are not advised.
func TestHugePagesAdvised(t *testing.T) {
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || !strings.Contains(string(b), "[madvise]") {
		t.Skip("transparent huge pages are not on request here (transparent_hugepage/enabled)")
	}
	inst, err := vk.NewInstance(false)
	require.NoError(t, err)
	defer inst.Destroy()
	dev, err := inst.OpenDevice(0, vk.DeviceOptions{})
	require.NoError(t, err)
	defer dev.Destroy()
	if dev.Info.Type != vk.TypeCPU {
		t.Skipf("%s is not a CPU device", dev.Info.Name)
	}
	buf, err := dev.NewBuffer(16 << 20)
	require.NoError(t, err)
	defer buf.Destroy()
	addr := uint64(uintptr(unsafe.Pointer(&buf.Bytes()[8<<20])))
	smaps, err := os.ReadFile("/proc/self/smaps")
	require.NoError(t, err)
	var inside bool
	for _, line := range strings.Split(string(smaps), "\n") {
		var lo, hi uint64
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 {
			inside = lo <= addr && addr < hi
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			require.Contains(t, strings.Fields(line), "hg", "the mapping holding the buffer's middle is advised huge: %s", line)
			return
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
}

// TestByAddress: a kernel that reaches bindings by device address takes
// them within its bindings and push constants, and a view's address is
// its buffer's plus its offset.
func TestByAddress(t *testing.T) {
	inst, err := vk.NewInstance(false)
	require.NoError(t, err)
	defer inst.Destroy()
	devs, err := inst.Devices()
	require.NoError(t, err)
	idx, err := vk.ChooseDevice(devs, "")
	require.NoError(t, err)
	dev, err := inst.OpenDevice(idx, vk.DeviceOptions{})
	require.NoError(t, err)
	defer dev.Destroy()
	if !dev.Info.BufferAddress {
		t.Skipf("%s has no buffer device addresses", dev.Info.Name)
	}
	k, err := dev.NewKernel("scale", scaleKernel(), 2, 12)
	require.NoError(t, err)
	defer k.Destroy()
	require.ErrorContains(t, k.ByAddress([]int{2}), "has no binding 2")
	require.ErrorContains(t, k.ByAddress([]int{0, 1}), "pushes 12 bytes, too few for 2 addresses")
	require.NoError(t, k.ByAddress([]int{1}))
	b, err := dev.NewBuffer(4096)
	require.NoError(t, err)
	defer b.Destroy()
	require.NotZero(t, b.Address())
	v, err := b.View(256, 1024)
	require.NoError(t, err)
	require.Equal(t, b.Address()+256, v.Address())
	// The dispatch pushes its own 4 bytes; the address is appended.
	_, err = dev.Record([]vk.Dispatch{{Kernel: k, Buffers: []*vk.Buffer{b, v}, Push: make([]byte, 12), Groups: [3]uint32{1, 1, 1}}})
	require.ErrorContains(t, err, "pushes 12 bytes, kernel takes 4")
	cl, err := dev.Record([]vk.Dispatch{{Kernel: k, Buffers: []*vk.Buffer{b, v}, Push: make([]byte, 4), Groups: [3]uint32{1, 1, 1}}})
	require.NoError(t, err)
	cl.Destroy()
}
