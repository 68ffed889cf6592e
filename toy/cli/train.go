// toy train, toy runs, toy lora: training recipes from the command line.

package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/display"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/hub"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/recipes"
	"github.com/toyml/toy/toy/runlog"
	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tokenizer"
	"golang.org/x/term"
)

type trainFlags struct {
	model, data, tokenizer, out, arch, targets string
	steps, batch, seq, rank, every, threads    int
	device                                     string
	layers, embed, heads, kvHeads, ffn         int
	lr, alpha, dropout                         float64
	seed                                       uint64
	resume, asJSON                             bool
}

const trainUsage = "toy train from-scratch|warm-start|lora|qlora --data FILE|DIR [flags]"

func trainFlagSet() (*flag.FlagSet, *trainFlags) {
	f := &trainFlags{}
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.StringVar(&f.model, "model", "", "MODEL to start from (warm-start, lora, qlora): a path, a name toy list shows, or "+defaultmodel.Name)
	fs.StringVar(&f.data, "data", "", "training text: a file or a directory of files")
	fs.StringVar(&f.tokenizer, "tokenizer", "", "MODEL whose tokenizer encodes the data (from-scratch; default: that of toy's default model, "+defaultmodel.Name+")")
	fs.StringVar(&f.out, "out", "", "run directory for events.jsonl, checkpoints and the result (default runs/<time>)")
	fs.IntVar(&f.steps, "steps", 100, "training steps")
	fs.IntVar(&f.batch, "batch", 4, "sequences per step (B)")
	fs.IntVar(&f.seq, "seq", 64, "tokens per sequence (T)")
	fs.Float64Var(&f.lr, "lr", 0, "peak learning rate, > 0 (default: 3e-4, LoRA 1e-3)")
	fs.IntVar(&f.rank, "rank", 8, "LoRA rank")
	fs.Float64Var(&f.alpha, "alpha", 16, "LoRA alpha")
	fs.Float64Var(&f.dropout, "dropout", 0, "LoRA dropout")
	fs.StringVar(&f.targets, "targets", "q,v", "LoRA target projections: q,k,v,o,qkv,gate,up,down")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for initialisation, data order and dropout")
	fs.IntVar(&f.every, "checkpoint-every", 50, "steps between checkpoints (0: only at the end, and when interrupted)")
	fs.BoolVar(&f.resume, "resume", false, "continue the run in --out from its checkpoint")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object per step")
	fs.IntVar(&f.threads, "threads", 0, "worker threads (0: all cores)")
	deviceFlag(fs, &f.device)
	fs.StringVar(&f.arch, "arch", "llama", "from-scratch architecture: a registered family that builds from a size ("+strings.Join(scratchArchs(), ", ")+")")
	fs.IntVar(&f.layers, "layers", 4, "from-scratch layers")
	fs.IntVar(&f.embed, "embed", 128, "from-scratch width")
	fs.IntVar(&f.heads, "heads", 4, "from-scratch attention heads")
	fs.IntVar(&f.kvHeads, "kv-heads", 0, "from-scratch key/value heads (default: heads)")
	fs.IntVar(&f.ffn, "ffn", 0, "from-scratch feed-forward width (default: the family's for the width)")
	return fs, f
}

func trainFlagsDoc() *flag.FlagSet { fs, _ := trainFlagSet(); return fs }

// check refuses flag values that would otherwise be silently replaced or
// fail later: a learning rate ≤ 0 (0 is the flag's "not given"), a negative
// checkpoint interval, a model for a recipe that takes none.
func (f *trainFlags) check(fs *flag.FlagSet, kind string) error {
	if flagGiven(fs, "lr") && !(f.lr > 0 && !math.IsInf(f.lr, 1)) {
		return fmt.Errorf("%w: --lr must be a number > 0, got %v", errUsage, f.lr)
	}
	if f.every < 0 {
		return fmt.Errorf("%w: --checkpoint-every must be ≥ 0 (0: only at the end), got %d", errUsage, f.every)
	}
	if kind == "from-scratch" && f.model != "" {
		return fmt.Errorf("%w: from-scratch starts from no model: give --tokenizer for its tokenizer, not --model", errUsage)
	}
	if kind != "from-scratch" && f.tokenizer != "" {
		return fmt.Errorf("%w: %s encodes the data with --model's tokenizer; --tokenizer is for from-scratch", errUsage, kind)
	}
	return nil
}

func isHelpArg(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

func runTrain(args []string, stdout io.Writer) (err error) {
	fs, f := trainFlagSet()
	if len(args) > 0 && isHelpArg(args[0]) {
		_, err := parseFlags(fs, args, stdout)
		return err
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("%w: %s (\"toy help train\" lists the flags)", errUsage, trainUsage)
	}
	kind := args[0]
	switch kind {
	case "from-scratch", "warm-start", "lora", "qlora":
	default:
		return fmt.Errorf("%w: unknown recipe %q (from-scratch, warm-start, lora, qlora)", errUsage, kind)
	}
	pos, err := parseFlags(fs, args[1:], stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	if err := f.check(fs, kind); err != nil {
		return err
	}
	if err := setThreads(f.threads); err != nil {
		return err
	}
	if err := useDevice(f.device); err != nil {
		return err
	}
	if f.out == "" {
		if f.resume {
			return fmt.Errorf("%w: --resume needs --out, the run directory to continue", errUsage)
		}
		f.out = filepath.Join("runs", time.Now().UTC().Format("20060102-150405"))
	}
	ckpt := filepath.Join(f.out, "checkpoint.gguf")
	if f.model != "" {
		if f.model, err = resolveModel(f.model); err != nil { // the recipes take a file: the built-in model's is cached
			return fmt.Errorf("--model: %w", err)
		}
	}

	var r *recipes.Recipe
	if f.resume {
		if r, err = recipes.Resume(ckpt); err != nil {
			return err
		}
		if r.Kind != kind {
			return fmt.Errorf("%w: --resume: %s holds a %s run, not %s", errUsage, ckpt, r.Kind, kind)
		}
		if err := sameOptions(r.Options, *f, fs); err != nil {
			return err
		}
		if err := sameModel(ckpt, kind, f.model); err != nil {
			return err
		}
	} else if r, err = newRecipe(kind, *f); err != nil {
		return err
	}
	// The data's tokenizer: a checkpoint carries its model's (a from-scratch
	// one the tokenizer it was started with), so a resume needs neither flag.
	tokSource := f.model
	switch {
	case kind == "from-scratch" && f.tokenizer != "":
		tokSource = f.tokenizer
	case f.resume:
		tokSource = ckpt
	case kind == "from-scratch":
		tokSource = "" // the default model's
	case tokSource == "":
		return fmt.Errorf("%w: %s needs --model", errUsage, kind)
	}
	tok, err := loadTokenizer(tokSource)
	if err != nil {
		return err
	}
	if tok.VocabSize() > r.Model.VocabSize() {
		return fmt.Errorf("the tokenizer has %d tokens, the model %d", tok.VocabSize(), r.Model.VocabSize())
	}
	data, err := loadData(f.data, tok)
	if err != nil {
		return err
	}
	if len(data) < r.Options.Context+2 {
		return fmt.Errorf("--data: %d tokens; need at least %d for one sequence of %d", len(data), r.Options.Context+2, r.Options.Context)
	}

	// From here the run directory is ours (runlog.Create locks it) until
	// the log is ended or closed, which every return below does.
	log, err := runlog.Create(f.out)
	if errors.Is(err, runlog.ErrBusy) {
		return failure(fmt.Errorf("--out %s: another toy train is writing this run directory (it holds the lock on its events.jsonl); wait for it to end, or give another --out", f.out))
	}
	if err != nil {
		return err
	}
	ended := false
	end := func(reason string) error { ended = true; return log.End(reason) }
	defer func() {
		if ended {
			return
		}
		if err != nil {
			log.End("error: " + err.Error())
		} else {
			log.Close()
		}
	}()
	result := filepath.Join(f.out, "model.gguf")
	if kind == "lora" || kind == "qlora" {
		result = filepath.Join(f.out, "adapter.gguf")
	}
	// What a killed run was writing when it died.
	removed := 0
	for _, p := range []string{ckpt, result} {
		n, err := gguf.RemoveTemps(p)
		if err != nil {
			return fmt.Errorf("remove what a killed run left in %s: %w", f.out, err)
		}
		removed += n
	}
	if removed > 0 {
		fmt.Fprintf(os.Stderr, "toy train: removed %d temporary file(s) a killed run left in %s\n", removed, f.out)
	}
	save := func() error {
		if kind == "lora" || kind == "qlora" {
			return r.SaveAdapter(result)
		}
		return r.SaveModel(result)
	}
	if r.Steps >= r.Options.Steps { // a resume of a run whose checkpoint is its last step
		prev, _ := runlog.Read(f.out)
		if _, serr := os.Stat(result); serr == nil && prev.Ended == "done" {
			ended = true
			if err := log.Close(); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "the run in %s is already complete (%d of %d steps, %s); nothing to do\n", f.out, r.Steps, r.Options.Steps, result)
			return nil
		}
		// Killed after its last checkpoint: finish what it did not.
		if err := save(); err != nil {
			return err
		}
		if err := log.Start(kind, tensor.ActiveBackend().Name(), r.ModelConfig(), r.Options); err != nil {
			return err
		}
		if err := end("done"); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "the run in %s was already at its last step (%d of %d); wrote %s\n", f.out, r.Steps, r.Options.Steps, result)
		return nil
	}
	if err := log.Start(kind, tensor.ActiveBackend().Name(), r.ModelConfig(), r.Options); err != nil {
		return err
	}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt)
	defer signal.Stop(interrupted)
	terminal := isTerminal(os.Stderr) && !f.asJSON
	start, lastLoss := time.Now(), math.NaN()
	for r.Steps < r.Options.Steps {
		select {
		case <-interrupted:
			if err := r.SaveCheckpoint(ckpt); err != nil {
				return err
			}
			end("interrupted")
			return fmt.Errorf("interrupted at step %d; continue with --resume --out %s", r.Steps, f.out)
		default:
		}
		batch, err := engine.NewBatch(sampleBatch(data, r.Options, r.Steps), r.Model.VocabSize(), -1)
		if err != nil {
			return err
		}
		t0, lr := time.Now(), r.LR()
		res, err := r.StepResult(batch)
		if err != nil {
			return fmt.Errorf("%w (the last checkpoint, %s, is intact)", err, ckpt)
		}
		wall := time.Since(t0)
		lastLoss = float64(res.Loss)
		if err := log.Step(r.Steps, lastLoss, lr, res.Tokens, wall); err != nil {
			return err
		}
		report(stdout, f.asJSON, terminal, r, res, lr, wall, start)
		if f.every > 0 && r.Steps%f.every == 0 || r.Steps == r.Options.Steps {
			if err := r.SaveCheckpoint(ckpt); err != nil {
				return err
			}
		}
	}
	if terminal {
		fmt.Fprintln(os.Stderr)
	}
	if err := save(); err != nil {
		return err
	}
	if err := end("done"); err != nil {
		return err
	}
	if !f.asJSON {
		fmt.Fprintf(stdout, "done: %d steps, final loss %.4f, wrote %s\n", r.Steps, lastLoss, result)
	}
	return nil
}

// sameModel refuses a resume whose --model is not the model the run
// started from: for LoRA, the base its checkpoint names; for a warm start,
// a file whose metadata (architecture, hyperparameters, tokenizer) the
// checkpoint does not carry. Without --model there is nothing to compare.
func sameModel(ckpt, kind, model string) error {
	if model == "" {
		return nil
	}
	c, err := gguf.Open(ckpt)
	if err != nil {
		return err
	}
	defer c.Close()
	refuse := func(why string) error {
		return fmt.Errorf("%w: --resume: --model %s is not the model the run in %s started from (%s); resume without --model, or start a new run", errUsage, model, filepath.Dir(ckpt), why)
	}
	if kind == "lora" || kind == "qlora" {
		base, err := c.String(checkpointBaseKey)
		if err != nil {
			return err
		}
		a, err1 := os.Stat(base)
		b, err2 := os.Stat(model)
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			return refuse("its base is " + base)
		}
		return nil
	}
	m, err := gguf.Open(model)
	if err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	defer m.Close()
	have := map[string]any{}
	for _, kv := range c.KV {
		have[kv.Key] = kv.Value
	}
	for _, kv := range m.KV {
		if v, ok := have[kv.Key]; !ok || !reflect.DeepEqual(v, kv.Value) {
			return refuse("its " + kv.Key + " differs")
		}
	}
	return nil
}

// checkpointBaseKey is the metadata key under which a LoRA checkpoint names
// its base model's file (recipes.SaveCheckpoint writes it).
const checkpointBaseKey = "toy.checkpoint.base"

func newRecipe(kind string, f trainFlags) (*recipes.Recipe, error) {
	o := recipes.NewOptions(f.seq).WithBatch(f.batch).WithSteps(f.steps).WithSeed(f.seed).
		WithRank(f.rank).WithAlpha(f.alpha).WithDropout(f.dropout).WithTargets(strings.Split(f.targets, ",")...)
	if f.lr > 0 {
		o = o.WithLR(f.lr)
	}
	if kind != "from-scratch" && f.model == "" {
		return nil, fmt.Errorf("%w: %s needs --model", errUsage, kind)
	}
	switch kind {
	case "warm-start":
		return recipes.NewWarmStart(f.model, o)
	case "lora":
		return recipes.NewLoRA(f.model, o)
	case "qlora":
		return recipes.NewQLoRA(f.model, o)
	}
	tf, err := openTokenizer(f.tokenizer)
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	tok, err := tokenizer.FromGGUF(tf)
	if err != nil {
		return nil, err
	}
	r, err := fromScratch(f, tok.VocabSize())
	if err == nil {
		r.UseTokenizerOf(tf)
	}
	return r, err
}

// fromScratch builds a model of the family --arch names, with the sizes the
// flags give, through the registry: toy's own families and any a lab
// registered.
func fromScratch(f trainFlags, vocab int) (*recipes.Recipe, error) {
	o := recipes.NewOptions(f.seq).WithBatch(f.batch).WithSteps(f.steps).WithSeed(f.seed)
	if f.lr > 0 {
		o = o.WithLR(f.lr)
	}
	fam, err := models.Lookup(f.arch)
	if err != nil || fam.Sized == nil || fam.New == nil {
		return nil, fmt.Errorf("%w: --arch %s: not a family that builds from scratch (these do: %s)", errUsage, f.arch, strings.Join(scratchArchs(), ", "))
	}
	if f.heads <= 0 || f.embed%f.heads != 0 {
		return nil, fmt.Errorf("--embed %d is not divisible by --heads %d", f.embed, f.heads)
	}
	cfg := fam.Sized(models.Shape{VocabSize: vocab, ContextLength: max(f.seq, 16), Embed: f.embed,
		Layers: f.layers, Heads: f.heads, KVHeads: f.kvHeads, FFN: f.ffn})
	return recipes.NewFromScratch(cfg, o)
}

// scratchArchs lists the registered families toy train from-scratch can
// build: those with a Sized function (and a New).
func scratchArchs() []string {
	var names []string
	for _, fam := range models.Families() {
		if fam.Sized != nil && fam.New != nil {
			names = append(names, fam.Arch)
		}
	}
	return names
}

// sameOptions rejects a resume whose explicitly given flags disagree with the
// checkpoint's options.
func sameOptions(o recipes.Options, f trainFlags, fs *flag.FlagSet) error {
	differs := map[string]bool{"seq": f.seq != o.Context, "batch": f.batch != o.Batch, "lr": f.lr != o.LR,
		"seed": f.seed != o.Seed, "rank": f.rank != o.Rank, "steps": f.steps != o.Steps}
	var bad []string
	fs.Visit(func(fl *flag.Flag) {
		if differs[fl.Name] {
			bad = append(bad, "--"+fl.Name+" "+fl.Value.String())
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("--resume: %s differ from the checkpoint's configuration; resume without them or start a new run", strings.Join(bad, ", "))
	}
	return nil
}

// openTokenizer opens the GGUF file whose tokenizer a from-scratch run uses:
// path, or toy's default model when path is empty.
func openTokenizer(path string) (*gguf.File, error) {
	if path == "" || isBuiltin(path) {
		f, err := gguf.Parse(defaultmodel.Bytes())
		if err != nil {
			return nil, fmt.Errorf("the default model's tokenizer: %w", err)
		}
		return f, nil
	}
	file, err := hub.Resolve(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	f, err := gguf.Open(file)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return f, nil
}

func loadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	f, err := openTokenizer(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return tokenizer.FromGGUF(f)
}

// loadData reads a file, or every regular file under a directory in name
// order, and tokenizes the text.
func loadData(path string, tok *tokenizer.Tokenizer) ([]int32, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: --data FILE|DIR is required", errUsage)
	}
	var files []string
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	if st.IsDir() {
		filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
	} else {
		files = []string{path}
	}
	var ids []int32
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		ids = append(ids, tok.Encode(string(b), tokenizer.EncodeOptions{AddBOS: true})...)
	}
	return ids, nil
}

// sampleBatch picks B windows of T+1 tokens for a step; the windows depend
// only on the seed and the step, so a resumed run sees the same data.
func sampleBatch(data []int32, o recipes.Options, step int) [][]int32 {
	var seqs [][]int32
	span := uint64(len(data) - o.Context - 1)
	for b := 0; b < o.Batch; b++ {
		z := o.Seed*0x9e3779b97f4a7c15 + uint64(step)*0xbf58476d1ce4e5b9 + uint64(b)*0x94d049bb133111eb
		z = (z ^ z>>31) * 0xbf58476d1ce4e5b9
		z ^= z >> 29
		at := int(z % (span + 1))
		seqs = append(seqs, data[at:at+o.Context+1])
	}
	return seqs
}

func report(w io.Writer, asJSON, terminal bool, r *recipes.Recipe, res engine.StepResult, lr float64, wall time.Duration, start time.Time) {
	tps := float64(res.Tokens) / wall.Seconds()
	if asJSON {
		json.NewEncoder(w).Encode(map[string]any{"step": r.Steps, "loss": res.Loss, "lr": lr, "tokens": res.Tokens,
			"tokens_per_second": tps, "grad_norm": res.GradNorm})
		return
	}
	if !terminal {
		fmt.Fprintf(w, "step %d: loss=%.4f lr=%.2e tok/s=%.0f\n", r.Steps, res.Loss, lr, tps)
		return
	}
	done, total := r.Steps, r.Options.Steps
	eta := time.Duration(float64(time.Since(start)) / float64(done) * float64(total-done)).Round(time.Second)
	width := 30
	bar := strings.Repeat("█", done*width/total) + strings.Repeat("·", width-done*width/total)
	fmt.Fprintf(os.Stderr, "\r%s step %d/%d  loss %.4f  %.0f tok/s  ETA %v   ", bar, done, total, res.Loss, tps, eta)
}

// isTerminal reports whether w is a terminal (not a file, a pipe or
// /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

type runsFlags struct {
	dir, out, typ string
	asJSON        bool
}

func runsFlagSet() (*flag.FlagSet, *runsFlags) {
	f := &runsFlags{}
	fs := flag.NewFlagSet("runs", flag.ContinueOnError)
	fs.StringVar(&f.dir, "dir", "runs", "directory holding the runs")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	fs.StringVar(&f.out, "o", "", "plot: the PNG to write; export: the GGUF model file to write")
	fs.StringVar(&f.typ, "type", "f32", "export: weight type (f32, f16, bf16, q8_0)")
	return fs, f
}

func runsFlagsDoc() *flag.FlagSet { fs, _ := runsFlagSet(); return fs }

func runRuns(args []string, stdout io.Writer) error {
	fs, f := runsFlagSet()
	dir, asJSON, out, typ := &f.dir, &f.asJSON, &f.out, &f.typ
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 2 && pos[0] == "export" {
		return exportRun(filepath.Join(*dir, pos[1]), *out, *typ, stdout)
	}
	if len(pos) == 2 && pos[0] == "plot" {
		return plotRun(filepath.Join(*dir, pos[1]), *out, stdout)
	}
	if len(pos) == 0 || pos[0] == "list" {
		runs, err := runlog.Scan(*dir)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(runs)
		}
		for _, r := range runs {
			fmt.Fprintf(stdout, "%-24s %-13s steps %5d  final loss %.4f  %s\n", r.ID, r.Recipe, len(r.LossCurve), r.FinalLoss, r.Ended)
		}
		return nil
	}
	if pos[0] == "show" && len(pos) == 2 {
		r, err := runlog.Read(filepath.Join(*dir, pos[1]))
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(r)
		}
		fmt.Fprintf(stdout, "run %s (%s), ended: %q\nconfig: %s\nmodel: %s\n", r.ID, r.Recipe, r.Ended, r.Config, r.Model)
		for i, l := range r.LossCurve {
			fmt.Fprintf(stdout, "step %d: loss=%.4f\n", i+1, l)
		}
		return nil
	}
	return fmt.Errorf("%w: toy runs [list | show ID | plot ID -o loss.png | export ID -o OUT.gguf [--type q8_0]] [--dir runs]", errUsage)
}

// plotRun draws a run's loss curve as a PNG.
func plotRun(run, out string, stdout io.Writer) error {
	if out == "" {
		return fmt.Errorf("%w: plot needs -o loss.png", errUsage)
	}
	r, err := runlog.Read(run)
	if err != nil {
		return err
	}
	if len(r.LossCurve) == 0 {
		return fmt.Errorf("run %s has no steps yet", run)
	}
	png, err := display.PlotPNG(fmt.Sprintf("%s: loss (%s)", r.ID, r.Recipe), 800, 500, r.LossCurve)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		return failure(err)
	}
	fmt.Fprintf(stdout, "wrote %s (%d steps, final loss %.4f)\n", out, len(r.LossCurve), r.FinalLoss)
	return nil
}

// exportRun writes the model of a run's latest checkpoint (for LoRA runs,
// the base with the adapter merged), converted to typ.
func exportRun(run, out, typ string, stdout io.Writer) error {
	if out == "" {
		return fmt.Errorf("%w: export needs -o OUT.gguf", errUsage)
	}
	r, err := recipes.Resume(filepath.Join(run, "checkpoint.gguf"))
	if err != nil {
		return err
	}
	tmp := out + ".f32.tmp"
	defer os.Remove(tmp)
	if err := r.SaveModel(tmp); err != nil {
		return err
	}
	if err := runQuantize([]string{tmp, out, "--type", typ}, io.Discard); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: step %d of %s run %s (%s)\n", out, r.Steps, r.Kind, run, typ)
	return nil
}

func loraFlagSet() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("lora", flag.ContinueOnError)
	return fs, fs.String("o", "", "output GGUF file")
}

func loraFlagsDoc() *flag.FlagSet { fs, _ := loraFlagSet(); return fs }

func runLoRA(args []string, stdout io.Writer) error {
	fs, out := loraFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 3 || pos[0] != "merge" || *out == "" {
		return fmt.Errorf("%w: toy lora merge BASE.gguf ADAPTER.gguf -o OUT.gguf", errUsage)
	}
	if err := recipes.MergeAdapter(pos[1], pos[2], *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}
