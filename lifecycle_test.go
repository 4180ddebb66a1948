package vkjit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
)

const busyModule = `HloModule busy
ENTRY e {
  x = f32[512,512] parameter(0)
  d = f32[512,512] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[512,512] tanh(d)
}`

// hammer runs exe from several goroutines until each gets an error, and
// returns the errors; stop closes what the test closes once runs are in
// flight.
func hammer(t *testing.T, r *vkjit.Runtime, exe *vkjit.Executable, dev bool, stop func()) []error {
	x := must(vkjit.Float32s([]int64{512, 512}, make([]float32, 512*512)))
	var wg sync.WaitGroup
	errs := make([]error, 4)
	started := make(chan bool, len(errs))
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				var err error
				if dev {
					var d *vkjit.DeviceTensor
					if d, err = r.Upload(x); err == nil {
						var res []*vkjit.DeviceTensor
						res, _, err = exe.RunDevice(context.Background(), d)
						for _, r := range res {
							r.Close()
						}
						d.Close()
					}
				} else {
					_, _, err = exe.Run(context.Background(), x)
				}
				if i == 0 {
					started <- true
				}
				if err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	for range errs {
		<-started
	}
	time.Sleep(20 * time.Millisecond)
	stop()
	wg.Wait()
	return errs
}

// TestCloseWhileRunning: Executable.Close and Runtime.Close wait for the
// runs in flight (they once freed pipelines under them: SIGSEGV), and
// every run after them gets ErrClosed.
func TestCloseWhileRunning(t *testing.T) {
	for _, dev := range []bool{false, true} {
		r, err := vkjit.Open(vkjit.Options{NoCache: true})
		require.NoError(t, err)
		exe, err := r.CompileText("busy", busyModule, vkjit.CompileOptions{})
		require.NoError(t, err)
		for _, err := range hammer(t, r, exe, dev, exe.Close) {
			require.ErrorIs(t, err, vkjit.ErrClosed)
		}
		exe2, err := r.CompileText("busy", busyModule, vkjit.CompileOptions{})
		require.NoError(t, err)
		for _, err := range hammer(t, r, exe2, dev, r.Close) {
			require.ErrorIs(t, err, vkjit.ErrClosed)
		}
		exe2.Close() // after the runtime: nothing to do, no crash
		r.Close()    // twice: nothing to do
	}
	noValidationMessages(t)
}

// TestAfterClose: every call after Close returns ErrClosed, or does
// nothing where it has nothing to return (Release, Close); none panics.
func TestAfterClose(t *testing.T) {
	r, err := vkjit.Open(vkjit.Options{NoCache: true})
	require.NoError(t, err)
	exe, err := r.CompileText("busy", busyModule, vkjit.CompileOptions{})
	require.NoError(t, err)
	x := must(vkjit.Float32s([]int64{512, 512}, make([]float32, 512*512)))
	d, err := r.Upload(x)
	require.NoError(t, err)
	res, _, err := exe.RunDevice(context.Background(), d)
	require.NoError(t, err)

	exe.Close()
	_, _, err = exe.Run(context.Background(), x)
	require.ErrorIs(t, err, vkjit.ErrClosed)
	_, _, err = exe.RunDevice(context.Background(), d)
	require.ErrorIs(t, err, vkjit.ErrClosed)
	_, _, err = exe.Profile(context.Background(), x)
	require.ErrorIs(t, err, vkjit.ErrClosed)
	for sr := range exe.Stream(context.Background(), oneArgs(x)) {
		require.ErrorIs(t, sr.Err, vkjit.ErrClosed)
	}
	_, err = res[0].ToHost()
	require.NoError(t, err, "a result outlives its executable")

	r.Close()
	for name, call := range map[string]func() error{
		"Run":         func() error { _, _, err := exe.Run(context.Background(), x); return err },
		"Upload":      func() error { _, err := r.Upload(x); return err },
		"CompileText": func() error { _, err := r.CompileText("busy", busyModule, vkjit.CompileOptions{}); return err },
		"Compile":     func() error { _, err := r.Compile(nil, vkjit.CompileOptions{}); return err },
		"CompileFile": func() error { _, err := r.CompileFile("testdata/none.hlo", vkjit.CompileOptions{}); return err },
		"MemoryStats": func() error { _, err := r.MemoryStats(); return err },
		"TrimMemory":  func() error { _, err := r.TrimMemory(); return err },
		"ToHost":      func() error { _, err := res[0].ToHost(); return err },
	} {
		err := call()
		require.True(t, errors.Is(err, vkjit.ErrClosed), "%s after Close: %v", name, err)
	}
	res[0].Close()
	d.Close()
	exe.Close()
	r.Close()
	require.NotEmpty(t, r.Device().Name, "what the runtime knew of its device stays readable")
}

func oneArgs(x *vkjit.Tensor) chan []*vkjit.Tensor {
	c := make(chan []*vkjit.Tensor, 1)
	c <- []*vkjit.Tensor{x}
	close(c)
	return c
}
