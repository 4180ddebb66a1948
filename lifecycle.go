package vkjit

import (
	"errors"
	"sync"

	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// ErrOutOfMemory is wrapped by the error of a run or upload that does
// not fit in the device memory budget, after empty blocks were given back
// and the allocation retried.
var ErrOutOfMemory = pool.ErrOutOfMemory

// ErrNoDevice is wrapped by Open's error when no Vulkan device is there
// or none matches Options.Device; the message says what to install.
var ErrNoDevice = vk.ErrNoDevice

// ErrClosed is what every call on a Runtime, an Executable or a
// DeviceTensor returns once its runtime or executable is closed.
var ErrClosed = errors.New("vkjit: closed")

// life counts the calls in flight on an object that Close tears down:
// Close marks it closed, so that new calls get ErrClosed, and waits for
// the calls already inside to return before anything is freed (a run
// in flight once met destroyed pipelines: SIGSEGV).
type life struct {
	mu     sync.Mutex
	idle   sync.Cond
	active int
	closed bool
}

// enter starts a call; ErrClosed once close has begun.
func (l *life) enter() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.active++
	return nil
}

// exit ends a call enter started.
func (l *life) exit() {
	l.mu.Lock()
	l.active--
	if l.active == 0 && l.idle.L != nil {
		l.idle.Broadcast()
	}
	l.mu.Unlock()
}

// close marks the object closed and waits for the calls in flight. It
// reports whether this call closed it (false: closed before).
func (l *life) close() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.closed = true
	l.idle.L = &l.mu
	for l.active > 0 {
		l.idle.Wait()
	}
	return true
}
