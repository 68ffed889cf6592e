package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestGenerateJoinsInterrupt: a Generate started with context.Background()
// while an interrupt context is set stops when that context is cancelled —
// even after SetInterrupt's restore ran, since the call joined it at its
// start — and one started after the restore is not affected.
func TestGenerateJoinsInterrupt(t *testing.T) {
	m := counter{v: 10, ctx: 5000}
	ictx, interrupt := context.WithCancel(context.Background())
	restore := SetInterrupt(ictx)
	opts := Options{MaxTokens: 2000, OnToken: func(int32) {}}
	n := 0
	opts.OnToken = func(int32) {
		n++
		if n == 3 {
			restore()
			interrupt()
		}
		if n > 3 {
			time.Sleep(time.Millisecond) // the interrupt reaches the loop from another goroutine
		}
	}
	r, err := Generate(context.Background(), NewSession(m, 5000), []int32{3}, opts)
	if !errors.Is(err, context.Canceled) || r.Reason != "canceled" || len(r.IDs) >= 2000 {
		t.Fatalf("interrupted Generate: %d tokens, reason %q, err %v", len(r.IDs), r.Reason, err)
	}
	r, err = Generate(context.Background(), NewSession(m, 5000), []int32{3}, Options{MaxTokens: 50})
	if err != nil || len(r.IDs) != 50 {
		t.Fatalf("after restore: %d tokens, err %v", len(r.IDs), err)
	}
}

// An interactive front end sets the interrupt context around each
// evaluation; a Generate made without a context stops when it is cancelled.
func ExampleSetInterrupt() {
	ctx, cancel := context.WithCancel(context.Background()) // cancelled by Ctrl-C
	restore := SetInterrupt(ctx)
	defer restore()
	cancel()
	_, err := Generate(context.Background(), NewSession(counter{v: 10, ctx: 100}, 100), []int32{3}, Options{MaxTokens: 5})
	fmt.Println(err)
	// Output: context canceled
}
