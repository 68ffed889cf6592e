// The interrupt context: how an interactive front end stops a long compiled
// call that was made without a context of its own.
package engine

import (
	"context"
	"sync"
)

// interrupt is the context of the interactive evaluation running now.
var interrupt struct {
	sync.Mutex
	ctx context.Context // nil when none
}

// SetInterrupt makes ctx the process's interrupt context and returns a
// function that puts the previous one back. Package interp sets it around
// each evaluation of a REPL line or notebook cell, so that interrupting the
// cell (Ctrl-C, Jupyter's interrupt_request) also stops a compiled call the
// cell made without a context — m.Generate(ids, opts), m.GenerateText — at
// its next token, as if its own ctx had been cancelled.
//
// There is one interrupt context per process: with several interpreters
// evaluating at once, a call joins the one set last before it started.
// Programs that pass their own contexts need not call it.
func SetInterrupt(ctx context.Context) (restore func()) {
	interrupt.Lock()
	prev := interrupt.ctx
	interrupt.ctx = ctx
	interrupt.Unlock()
	return func() {
		interrupt.Lock()
		interrupt.ctx = prev
		interrupt.Unlock()
	}
}

// WithInterrupt returns a context done when ctx is or when the interrupt
// context current now (SetInterrupt) is, and the function that releases it.
// The interrupt context is read once, here: a long call joins it when it
// starts and stays joined after the evaluation that set it has returned.
// Generate calls it; so may other long-running loops.
func WithInterrupt(ctx context.Context) (context.Context, context.CancelFunc) {
	interrupt.Lock()
	ic := interrupt.ctx
	interrupt.Unlock()
	if ic == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	if ic.Err() != nil {
		cancel(context.Cause(ic))
		return ctx, func() {}
	}
	stop := context.AfterFunc(ic, func() { cancel(context.Cause(ic)) })
	return ctx, func() { stop(); cancel(nil) }
}
