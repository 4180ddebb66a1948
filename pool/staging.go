package pool

import (
	"fmt"
	"sync"

	"github.com/vkjit/vkjit/vk"
)

// DefaultStagingBytes is the staging ring's default size.
const DefaultStagingBytes = 32 << 20

// Write is one upload: Data into Dst from its start.
type Write struct {
	Dst  *vk.Buffer
	Data []byte
}

// Upload copies host bytes into device buffers. On a device that stages
// (vk.Device.Staged) the bytes go through the staging ring and one copy
// per ring-full is submitted to the transfer queue; Upload returns once
// they are submitted, not done: a kernel that binds a destination waits
// for its copy on the device (vk.Buffer.Ready). Otherwise the buffers are
// mapped and the bytes are copied at once.
func (p *Pool) Upload(ws ...Write) (err error) {
	for _, w := range ws {
		if int64(len(w.Data)) > w.Dst.Size() {
			return fmt.Errorf("pool: upload of %d bytes into a %d-byte buffer", len(w.Data), w.Dst.Size())
		}
	}
	if !p.dev.Staged() {
		for _, w := range ws {
			if err := w.Dst.Write(0, w.Data); err != nil {
				return err
			}
		}
		return nil
	}
	p.smu.Lock()
	defer p.smu.Unlock()
	r, err := p.ringLocked()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			r.cancel() // ranges taken and never submitted
		}
	}()
	var regions []vk.Region
	flush := func() error {
		if len(regions) == 0 {
			return nil
		}
		t, err := p.dev.Copy(regions, false)
		if err != nil {
			return err
		}
		r.submitted(t)
		regions = regions[:0]
		return nil
	}
	for _, w := range ws {
		for done := int64(0); done < int64(len(w.Data)); {
			n := min(int64(len(w.Data))-done, r.chunk())
			off, ok, err := r.take(n, len(regions) == 0)
			if err != nil {
				return err
			}
			if !ok { // the ring is full of this batch's own bytes
				if err := flush(); err != nil {
					return err
				}
				continue
			}
			vk.CopyHost(r.buf.Bytes()[off:off+n], w.Data[done:done+n])
			regions = append(regions, vk.Region{Src: r.buf, Dst: w.Dst, SrcOffset: off, DstOffset: done, Size: n})
			done += n
		}
	}
	return flush()
}

// Download copies src's first len(dst) bytes to the host, after every
// kernel submitted before has finished.
func (p *Pool) Download(src *vk.Buffer, dst []byte) error {
	if int64(len(dst)) > src.Size() {
		return fmt.Errorf("pool: download of %d bytes from a %d-byte buffer", len(dst), src.Size())
	}
	if !p.dev.Staged() {
		vk.CopyHost(dst, src.Bytes())
		return nil
	}
	for done := int64(0); done < int64(len(dst)); {
		p.smu.Lock()
		r, err := p.ringLocked()
		if err != nil {
			p.smu.Unlock()
			return err
		}
		n := min(int64(len(dst))-done, r.chunk())
		off, _, err := r.take(n, true)
		if err != nil {
			p.smu.Unlock()
			return err
		}
		t, err := p.dev.Copy([]vk.Region{{Src: src, Dst: r.buf, SrcOffset: done, DstOffset: off, Size: n}}, true)
		if err != nil {
			r.cancel()
			p.smu.Unlock()
			return err
		}
		s := r.submitted(t)
		s.held = true // the host reads it after the copy: not to be reused until then
		p.smu.Unlock()
		err = p.dev.Wait(t)
		if err == nil {
			vk.CopyHost(dst[done:done+n], r.buf.Bytes()[off:off+n])
		}
		p.smu.Lock()
		s.held = false
		r.cond.Broadcast()
		p.smu.Unlock()
		if err != nil {
			return err
		}
		done += n
	}
	return nil
}

// Copy copies all of src into dst on the device (after every kernel
// submitted before) and returns the copy's ticket: dst's Ready ticket is
// raised to it, and src must stay allocated until it is done (p.Wait).
func (p *Pool) Copy(dst, src *vk.Buffer) (vk.Ticket, error) {
	return p.dev.Copy([]vk.Region{{Src: src, Dst: dst, Size: src.Size()}}, true)
}

// Wait blocks until the copies of ticket t are done.
func (p *Pool) Wait(t vk.Ticket) error { return p.dev.Wait(t) }

// ringLocked is the staging ring, made on first use (p.smu held).
func (p *Pool) ringLocked() (*ring, error) {
	if p.ring != nil {
		return p.ring, nil
	}
	size := p.cfg.StagingBytes
	buf, err := p.dev.NewStagingBuffer(size)
	if err != nil {
		return nil, refused(err, fmt.Sprintf("a %d-byte staging buffer", size))
	}
	p.ring = &ring{dev: p.dev, buf: buf, size: size, granule: p.granule, cond: sync.NewCond(&p.smu)}
	return p.ring, nil
}

// ring hands out ranges of a staging buffer in order, each free again
// once the copy that uses it is done (and, for downloads, read).
type ring struct {
	dev     *vk.Device
	buf     *vk.Buffer
	size    int64
	granule int64
	head    int64  // where the next range starts
	segs    []*seg // in use, oldest first
	cond    *sync.Cond
}

type seg struct {
	start, end int64
	t          vk.Ticket // 0 while not yet submitted
	held       bool      // a download not yet read
}

// chunk is the most one range may hold: half the ring, so that one
// range can fill while the other is copied.
func (r *ring) chunk() int64 { return max(r.size/2/r.granule*r.granule, r.granule) }

// take reserves n bytes (at most chunk). When the ring is full of copies
// in flight it waits for the oldest, or for a download to read its bytes;
// when it is full of ranges not yet submitted, it reports !ok (the caller
// submits them and retries), or an error when wait says there are none.
// The pool's staging lock is held.
func (r *ring) take(n int64, wait bool) (int64, bool, error) {
	need := max((n+r.granule-1)/r.granule, 1) * r.granule
	for {
		if err := r.reclaim(); err != nil {
			return 0, false, err
		}
		if off, ok := r.fits(need); ok {
			r.segs = append(r.segs, &seg{start: off, end: off + need})
			r.head = off + need
			return off, true, nil
		}
		switch old := r.segs[0]; {
		case old.t == 0: // every range in use is this batch's own
			if wait {
				return 0, false, fmt.Errorf("pool: staging ring full of unsubmitted copies")
			}
			return 0, false, nil
		case old.held:
			// A download is reading it. Waiting releases the lock, so
			// this batch's own ranges go first (no other caller may
			// see them unsubmitted).
			if !wait && r.segs[len(r.segs)-1].t == 0 {
				return 0, false, nil
			}
			r.cond.Wait() // Download signals
		default:
			if err := r.dev.Wait(old.t); err != nil {
				return 0, false, err
			}
		}
	}
}

// fits finds room for need bytes after head, wrapping to the start; head
// never catches up with the oldest range (equal means empty).
func (r *ring) fits(need int64) (int64, bool) {
	if len(r.segs) == 0 {
		r.head = 0
		return 0, need <= r.size
	}
	tail := r.segs[0].start
	if r.head >= tail {
		if r.head+need <= r.size {
			return r.head, true
		}
		return 0, need < tail
	}
	return r.head, r.head+need < tail
}

// reclaim frees the oldest ranges whose copies are done and read.
func (r *ring) reclaim() error {
	n := 0
	for _, s := range r.segs {
		if s.t == 0 || s.held {
			break
		}
		done, err := r.dev.Done(s.t)
		if err != nil {
			return err
		}
		if !done {
			break
		}
		n++
	}
	r.segs = append(r.segs[:0], r.segs[n:]...)
	return nil
}

// submitted gives the ranges taken since the last submit their ticket and
// returns the last of them.
func (r *ring) submitted(t vk.Ticket) *seg {
	var last *seg
	for _, s := range r.segs {
		if s.t == 0 {
			s.t, last = t, s
		}
	}
	return last
}

// cancel gives back the ranges taken since the last submit (it failed).
func (r *ring) cancel() {
	keep := r.segs[:0]
	for _, s := range r.segs {
		if s.t != 0 {
			keep = append(keep, s)
		}
	}
	r.segs = keep
	if n := len(keep); n > 0 {
		r.head = keep[n-1].end
	}
}
