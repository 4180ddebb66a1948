package lower

import (
	"errors"
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// Device loops. A while loop run from the host costs a submit and a
// read-back of its predicate per iteration (~0.35 ms on lavapipe), which
// makes the loops JAX writes around scalar state (fori_loop counters,
// random keys, an index into a large array) run for minutes. A loop
// whose every value is a few elements, and whose large arrays are only
// read or updated at computed indices, runs instead as a kernel of one
// invocation that iterates the loop itself: the small state in
// registers, the large arrays in their buffers. Each dispatch runs the
// iterations the device's loop bound allows (llvmpipe ends an
// invocation's loops after 65535 iterations in all), keeps the state in
// the loop's result buffers, and writes a flag the runtime reads: 0 the
// loop is done, 1 dispatch again, 2 a single iteration needs more than
// the bound (nested loops too long), which is an error. Nested loops
// with a known short trip count are unrolled; others run as loops of
// their own, their iterations counted against the bound, and an
// iteration cut short by it is not committed but run again by the next
// dispatch. Updates of large arrays are deferred to the end of the
// iteration, after every read of the old values.

// planDeviceLoops plans a device loop for each live while loop of the
// entry computation that fits one; the others stay host loops.
func planDeviceLoops(s *state) error {
	if s.opts.HostLoops {
		return nil
	}
	for _, in := range s.mod.Entry.Instructions {
		if in.Op != hlo.OpWhile || !s.live[in] {
			continue
		}
		maxWords := kgen.LoopWords(in)
		if s.opts.DeviceLoops {
			maxWords = kgen.SeqWords
		}
		l, err := kgen.DeviceLoopKernel(in, s.tg, maxWords)
		// The host loop compiles its condition's and body's kernels
		// too: a device loop kernel of no more words than those costs
		// no more to compile, and saves each iteration's round trip
		// (jit_controller_issue26021_f64: 3 iterations, a device loop
		// of 5,523 words against a host body of 12 kernels and 10,864).
		if short := (kgen.ShortLoop{}); errors.As(err, &short) {
			if host, herr := s.hostLoopWords(in); herr == nil && host >= short.Words {
				if l, err = kgen.DeviceLoopKernel(in, s.tg, min(host, kgen.SeqWords)); err == nil {
					// The device loop replaces the host form: its
					// sub-programs are not emitted (one another loop
					// calls is compiled again by state.sub).
					cond, body := in.WhileComputations()
					delete(s.subs, subKey{cond, false})
					delete(s.subs, subKey{body, true})
				}
			}
		}
		if err != nil {
			// A host loop, which names anything unsupported; the plan
			// keeps why (Program.Describe shows it).
			s.plan.kernel(in).HostLoop = err.Error()
			continue
		}
		s.plan.kernel(in).Loop = l
	}
	return nil
}

// hostLoopWords is the SPIR-V words of while loop w's host form: its
// condition's and body's sub-programs, compiled as emission would and
// kept for it (state.sub).
func (s *state) hostLoopWords(w *hlo.Instruction) (int, error) {
	cond, body := w.WhileComputations()
	words := 0
	for _, c := range []subKey{{cond, false}, {body, true}} {
		p, err := s.subProgram(c)
		if err != nil {
			return 0, err
		}
		words += p.Words()
	}
	return words, nil
}

// loopBuffers gives a device loop's results their buffers: a big leaf
// the body passes through is its operand's buffer; every other leaf
// gets a temporary, as does the flag.
func (s *state) loopBuffers(w *hlo.Instruction, l *kgen.Loop) error {
	init := s.values[w.Operands[0]]
	var leaves []int
	for j, leaf := range w.Shape.Leaves() {
		if l.Big[j] && !l.Updated[j] {
			leaves = append(leaves, init[j])
			continue
		}
		i, err := s.newBuffer(Buffer{Name: fmt.Sprintf("%s.%d", w.Name, j), Kind: BufTemp, Shape: leaf})
		if err != nil {
			return w.Errorf("%v", err)
		}
		leaves = append(leaves, i)
	}
	s.values[w] = leaves
	f, err := s.newBuffer(Buffer{Name: w.Name + ".flag", Kind: BufTemp, Shape: hlo.ArrayShape(hlo.U32)})
	if err != nil {
		return w.Errorf("%v", err)
	}
	l.Flag = f
	return nil
}

// scratch gives a workgroup loop's scratch buffers (kgen.Loop.Scratch)
// temporaries.
func (s *state) scratch(w *hlo.Instruction, l *kgen.Loop) ([]int, error) {
	var out []int
	for j, sh := range l.Scratch {
		i, err := s.newBuffer(Buffer{Name: fmt.Sprintf("%s.scratch%d", w.Name, j), Kind: BufTemp, Shape: sh})
		if err != nil {
			return nil, w.Errorf("%v", err)
		}
		out = append(out, i)
	}
	return out, nil
}

// deviceLoop appends a device loop's steps: a copy of each big leaf the
// body updates (and under CopyInit each small leaf) into the result's
// buffer (the operand stays as it was), then the loop.
func (s *state) deviceLoop(w *hlo.Instruction, l *kgen.Loop, env kgen.Env) error {
	init, res := s.values[w.Operands[0]], s.values[w]
	leaves := w.Shape.Leaves()
	for j, leaf := range leaves {
		if !l.Copied(j) {
			continue
		}
		// Named alike, so that the copies of leaves of one type share a
		// kernel (its words name its bindings): each is a pipeline to
		// create and, on lavapipe, to compile at its first dispatch.
		src := &hlo.Instruction{Name: "init", Op: hlo.OpParameter, Shape: leaf}
		cp := &hlo.Instruction{Name: fmt.Sprintf("%s.copy%d", w.Name, j), Op: hlo.OpCopy, Shape: leaf, Operands: []*hlo.Instruction{src}}
		s.values[src], s.values[cp] = []int{init[j]}, []int{res[j]}
		env.Local = kgen.ElementwiseLocalSize(s.tg)
		k, err := kgen.Generate(kgen.KindElementwise, cp, env)
		if err != nil {
			return err
		}
		if err := s.dispatch(cp, k, leaf.NumElements(), nil, s.values[cp], nil); err != nil {
			return err
		}
	}
	var bufs []int
	nr := 0 // the bindings read only come first
	for _, lb := range l.Bindings() {
		switch {
		case lb.Leaf < 0:
			bufs = append(bufs, l.Flag)
		case lb.Init:
			bufs = append(bufs, init[lb.Leaf])
		default:
			bufs = append(bufs, res[lb.Leaf])
		}
		if lb.ReadOnly {
			nr++
		}
	}
	scratch, err := s.scratch(w, l)
	if err != nil {
		return err
	}
	bufs = append(bufs, scratch...)
	key := string(wordsKey(l.Kernel.Words))
	ki, ok := s.kernel[key]
	if !ok {
		ki = len(s.prog.Kernels)
		s.prog.Kernels = append(s.prog.Kernels, l.Kernel)
		s.kernel[key] = ki
	}
	s.prog.Steps = append(s.prog.Steps, Step{
		Kind:    StepLoop,
		Kernel:  ki,
		Buffers: bufs,
		Writes:  len(bufs) - nr,
		Push:    []uint32{1, 1},
		Groups:  [3]uint32{1, 1, 1},
		Pred:    l.Flag,
		Inst:    w.Name,
		// Batched: a barrier before, as the first of a submit needs none.
		AfterWrites: l.Dispatches > 0,
		Dispatches:  l.Dispatches,
	})
	return nil
}
