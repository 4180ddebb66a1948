package vkjit

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/vkjit/vkjit/cache"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/vk"
)

// Warming pipelines. Lavapipe translates a kernel to machine code at its
// first dispatch, not when its pipeline is made, and on the one thread
// that runs the queue: the first run of the DLRM training step (131
// kernels) spent 5.9 of its 6.4 s there, one kernel after another. warm
// compiles them before that run on several threads: this runtime's device
// and worker devices of their own each dispatch their share of the
// kernels with no workgroups, and Mesa's shader disk cache carries the
// workers' machine code to this device, whose first dispatch of each
// kernel then loads it. The code lavapipe makes for a dispatch depends on
// more than the kernel: a dispatch with the same push constants but other
// buffer sizes compiled again (measured: views of a 4 KiB scratch buffer
// left 2.5 s of compiling to the first run, views of 64 MiB all 6.3 s,
// views of each step's own buffer sizes none), so each warming dispatch
// binds views of a scratch buffer sized as its step's buffers and pushes
// its step's constants.

// minWarmWords is the least compile time, in SPIR-V words, that Auto
// warms to save: each worker device costs a device and a second
// translation of its share's SPIR-V (about 15 ms in all on lavapipe),
// and lavapipe compiles about 8-13 ms per 1000 words (a 22,300-word
// GEMM 300 ms). Cold first runs (whole process, fresh caches, Zen 5, 2
// cores), not warmed against warmed on two threads: mlp_train 1.41-1.45
// -> 0.87-0.88 s, transformer_block 1.26-1.36 -> 0.80-0.82, conv_grad
// 1.73-2.04 -> 1.07-1.18; programs of a few small kernels gained
// nothing (sort_rows, cumsum_rows: 10-20 ms more).
const minWarmWords = 10000

// warmPlan is how many threads warm jobs whose kernels have words SPIR-V
// words each, on procs threads, and the compile time (in words) they
// save: the jobs largest first, each to the least loaded thread, no
// more threads than the largest job's share of the whole needs; saved
// is the serial sum less the longest thread's.
func warmPlan(words []int, procs int) (threads, saved int) {
	total, largest := 0, 0
	for _, w := range words {
		total += w
		largest = max(largest, w)
	}
	if largest == 0 {
		return min(procs, len(words)), 0
	}
	threads = min(procs, len(words), (total+largest-1)/largest)
	if threads < 2 {
		return threads, 0
	}
	sorted := slices.Sorted(slices.Values(words))
	slices.Reverse(sorted)
	load := make([]int, threads)
	for _, w := range sorted {
		load[slices.Index(load, slices.Min(load))] += w
	}
	return threads, total - slices.Max(load)
}

// maxWarmScratch bounds the scratch blocks that warming views are cut
// from; a binding beyond it is bound at this size (its kernel may then
// compile again at its first dispatch).
const maxWarmScratch = 1 << 30

// warmJob is one distinct dispatch to warm: a kernel, its buffers' sizes
// and its push constants.
type warmJob struct {
	kernel int // index into the program's kernels (and loaded.kernels)
	prog   *lower.Program
	l      *loaded
	sizes  []int64
	push   []byte
}

// warmJobs lists the distinct dispatches of p and its sub-programs.
func warmJobs(p *lower.Program, l *loaded) []warmJob {
	var jobs []warmJob
	seen := map[string]bool{}
	var walk func(p *lower.Program, l *loaded)
	walk = func(p *lower.Program, l *loaded) {
		for _, st := range p.Steps {
			if !st.Kind.IsDispatch() {
				continue
			}
			j := warmJob{kernel: st.Kernel, prog: p, l: l, push: st.PushBytes()}
			for _, b := range st.Buffers {
				j.sizes = append(j.sizes, p.Buffers[b].Size)
			}
			key := fmt.Sprintf("%p|%d|%v|%x", p, st.Kernel, j.sizes, j.push)
			if !seen[key] {
				seen[key] = true
				jobs = append(jobs, j)
			}
		}
		for i, sp := range p.Subs {
			walk(sp, l.subs[i])
		}
	}
	walk(p, l)
	return jobs
}

// warm compiles the kernels of l's program ahead of its first run where
// the device compiles at first dispatch (a CPU device: lavapipe) and
// Mesa's disk cache can carry code between devices; it returns how many
// dispatches it warmed. Failures only cost the time: the first run
// compiles what warming did not.
func (r *Runtime) warm(l *loaded) int {
	if r.warmMode != nil && !*r.warmMode || !r.compilesAtDispatch() {
		return 0
	}
	jobs := warmJobs(l.prog, l)
	words := make([]int, len(jobs))
	for i, j := range jobs {
		words[i] = len(j.prog.Kernels[j.kernel].Words)
	}
	workers, saved := warmPlan(words, runtime.GOMAXPROCS(0))
	auto := r.warmMode == nil
	if workers < 2 || auto && saved < minWarmWords {
		return 0
	}
	key := r.warmKey(jobs)
	if auto && r.cache != nil {
		if _, ok := r.cache.Get(key); ok {
			return 0 // warmed before, and Mesa's cache keeps it
		}
	}
	// The largest kernels first, each to the next free worker: the
	// GEMMs take 250-680 ms each, most kernels 20-60.
	sort.SliceStable(jobs, func(a, b int) bool {
		return len(jobs[a].prog.Kernels[jobs[a].kernel].Words) > len(jobs[b].prog.Kernels[jobs[b].kernel].Words)
	})
	next := make(chan warmJob, len(jobs))
	for _, j := range jobs {
		next <- j
	}
	close(next)
	// One program's workers at a time: programs compiled concurrently
	// (vkjit test runs modules in parallel) each opened worker devices,
	// and one run of the StableHLO suite crashed in lavapipe's
	// vkWaitForFences on one worker while another program's worker was
	// in vkCreateDevice (SIGSEGV, once in many runs). The workers
	// already fill the cores.
	r.warmMu.Lock()
	defer r.warmMu.Unlock()
	// The worker devices are all opened before any warming starts and
	// destroyed after all of it ends: lavapipe crashed (SIGSEGV in
	// vkDestroyFence on this runtime's device, in a fuzz worker's crash
	// log) while another worker was in vkCreateDevice.
	devs := []*vk.Device{r.dev}
	for range workers - 1 {
		d, err := r.inst.OpenDevice(r.devIndex, vk.DeviceOptions{})
		if err != nil {
			break // fewer workers
		}
		devs = append(devs, d)
	}
	defer func() {
		for _, d := range devs[1:] {
			d.Destroy()
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for w, d := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := r.warmOn(d, w == 0, next)
			mu.Lock()
			done += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if done == len(jobs) && r.cache != nil {
		_ = r.cache.Put(key, []byte{1}) // a marker only: losing it costs one more warming
	}
	return done
}

// compilesAtDispatch reports whether the device compiles kernels at
// their first dispatch (a CPU device: lavapipe; GPU drivers compile as
// pipelines are made, which pipelines does on several threads) and
// Mesa's disk cache is there to carry code between devices.
func (r *Runtime) compilesAtDispatch() bool {
	return r.dev.Info.Type == vk.TypeCPU && mesaDiskCache()
}

// warmOn dispatches jobs with no workgroups on d, this runtime's device
// (own) or a worker device, and returns how many it did. Each binding is
// a view of a scratch block of the size the pool would carve its buffer
// from.
func (r *Runtime) warmOn(d *vk.Device, own bool, jobs <-chan warmJob) int {
	blocks := map[int64]*vk.Buffer{}
	defer func() {
		for _, b := range blocks {
			b.Destroy()
		}
	}()
	block := func(size int64) (*vk.Buffer, error) {
		n := min(r.pool.BlockBytesFor(size), maxWarmScratch)
		if b := blocks[n]; b != nil {
			return b, nil
		}
		b, err := d.NewBuffer(n)
		if err == nil {
			blocks[n] = b
		}
		return b, err
	}
	done := 0
	for j := range jobs {
		if r.warmOne(d, own, j, block) == nil {
			done++
		}
	}
	return done
}

func (r *Runtime) warmOne(d *vk.Device, own bool, j warmJob, block func(int64) (*vk.Buffer, error)) error {
	k := j.l.kernels[j.kernel]
	if !own {
		var err error
		if k, err = deviceKernel(d, j.prog.Kernels[j.kernel]); err != nil {
			return err
		}
		defer k.Destroy()
	}
	bufs := make([]*vk.Buffer, len(j.sizes))
	for i, s := range j.sizes {
		b, err := block(s)
		if err != nil {
			return err
		}
		if bufs[i], err = b.View(0, min(s, b.Size())); err != nil {
			return err
		}
	}
	cl, err := d.Record([]vk.Dispatch{{Kernel: k, Buffers: bufs, Push: j.push}})
	if err != nil {
		return err
	}
	defer cl.Destroy()
	return cl.Submit(0)
}

// warmKey names the marker that says jobs were warmed on this device
// and driver.
func (r *Runtime) warmKey(jobs []warmJob) string {
	h := sha256.New()
	for _, j := range jobs {
		k := j.prog.Kernels[j.kernel]
		binary.Write(h, binary.LittleEndian, k.Words)
		binary.Write(h, binary.LittleEndian, j.sizes)
		h.Write(j.push)
	}
	d := r.dev.Info
	return cache.Key([]byte("vkjit warmed"), []byte(fmt.Sprintf("%s|%x|%x|%x", d.Name, d.VendorID, d.DeviceID, d.DriverVersion)), h.Sum(nil))
}

// mesaDiskCache reports whether Mesa's shader disk cache is on and its
// directory writable, as Mesa finds it: MESA_SHADER_CACHE_DISABLE (or
// the older MESA_GLSL_CACHE_DISABLE) turns it off; MESA_SHADER_CACHE_DIR
// (MESA_GLSL_CACHE_DIR), else $XDG_CACHE_HOME/mesa_shader_cache, else
// $HOME/.cache/mesa_shader_cache holds it.
func mesaDiskCache() bool {
	for _, v := range []string{"MESA_SHADER_CACHE_DISABLE", "MESA_GLSL_CACHE_DISABLE"} {
		switch strings.ToLower(os.Getenv(v)) {
		case "1", "true", "yes", "y":
			return false
		}
	}
	dir := os.Getenv("MESA_SHADER_CACHE_DIR")
	if dir == "" {
		dir = os.Getenv("MESA_GLSL_CACHE_DIR")
	}
	if dir == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home := os.Getenv("HOME")
			if home == "" {
				return false
			}
			base = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(base, "mesa_shader_cache")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false
	}
	f, err := os.CreateTemp(dir, ".vkjit-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
