package vkjit

import "context"

// StreamResult is one run's outcome from Stream.
type StreamResult struct {
	Outputs []*Tensor
	Stats   RunStats
	Err     error
}

// Stream runs the executable once for each argument list received from
// in, in order, and sends each run's results, in the same order, on the
// channel it returns. The arguments of run i+1 are uploaded while run i
// computes, and run i's results are read back while run i+1 computes.
//
// The returned channel closes after in closes and the last result is
// sent, or once ctx is done: a caller that stops reading cancels ctx, and
// then every goroutine Stream started returns and every device tensor it
// made is closed, whether or not anyone reads again.
func (e *Executable) Stream(ctx context.Context, in <-chan []*Tensor) <-chan StreamResult {
	type uploaded struct {
		args []*DeviceTensor
		err  error
	}
	type ran struct {
		res []*DeviceTensor
		st  RunStats
		err error
	}
	closeAll := func(ds []*DeviceTensor) {
		for _, d := range ds {
			d.Close()
		}
	}
	up := make(chan uploaded, 1)
	go func() { // uploads
		defer close(up)
		for {
			var args []*Tensor
			var ok bool
			select {
			case args, ok = <-in:
				if !ok {
					return
				}
			case <-ctx.Done():
				return
			}
			var u uploaded
			if u.err = e.CheckArgs(args); u.err == nil {
				for _, a := range args {
					d, err := e.rt.Upload(a)
					if err != nil {
						u.err = err
						break
					}
					u.args = append(u.args, d)
				}
			}
			select {
			case up <- u:
			case <-ctx.Done():
				closeAll(u.args)
				return
			}
		}
	}()
	results := make(chan ran, 1)
	go func() { // runs
		defer close(results)
		// Whatever is left upstream when ctx ends is closed here: the
		// uploads goroutine closes up once it sees ctx done.
		defer func() {
			for u := range up {
				closeAll(u.args)
			}
		}()
		for u := range up {
			x := ran{err: u.err}
			if x.err == nil {
				x.res, x.st, x.err = e.RunDevice(ctx, u.args...)
			}
			closeAll(u.args)
			select {
			case results <- x:
			case <-ctx.Done():
				closeAll(x.res)
				return
			}
		}
	}()
	out := make(chan StreamResult, 1)
	go func() { // downloads
		defer close(out)
		defer func() {
			for x := range results {
				closeAll(x.res)
			}
		}()
		for x := range results {
			r := StreamResult{Stats: x.st, Err: x.err}
			for _, d := range x.res {
				if r.Err == nil {
					t, err := d.ToHost()
					r.Outputs, r.Err = append(r.Outputs, t), err
				}
				d.Close()
			}
			if r.Err != nil {
				r.Outputs = nil
			}
			select {
			case out <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
