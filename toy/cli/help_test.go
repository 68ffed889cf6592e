package cli

import (
	"slices"
	"strings"
	"testing"
)

// Help has one source: "toy help X" and "toy X --help" print the same
// usage and flags for every command, and an unknown command prints the
// usage "toy --help" prints.
func TestHelpIsOneSource(t *testing.T) {
	_, usage, _ := runToy("--help")
	if usage != helpText() {
		t.Fatalf("toy --help:\n%s", usage)
	}
	status, _, errs := runToy("frobnicate")
	if status != 2 || errs != "toy: unknown command \"frobnicate\"\n\n"+usage {
		t.Errorf("unknown command: status %d, stderr\n%s", status, errs)
	}
	var names []string
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s1, help, e1 := runToy("help", name)
		s2, flagHelp, e2 := runToy(name, "--help")
		s3, shortHelp, _ := runToy(name, "-h")
		if s1 != 0 || s2 != 0 || s3 != 0 || help != flagHelp || help != shortHelp || !strings.HasPrefix(help, "Usage: toy "+name) {
			t.Errorf("toy help %s (status %d, %s):\n%s\ntoy %s --help (status %d, %s):\n%s", name, s1, e1, help, name, s2, e2, flagHelp)
		}
	}
}

// toy help train and toy train --help list the train flags, which only
// toy train from-scratch --help did.
func TestHelpTrain(t *testing.T) {
	_, help, _ := runToy("help", "train")
	for _, flag := range []string{"-model", "-data", "-tokenizer", "-lr", "-checkpoint-every", "-resume", "-arch"} {
		if !strings.Contains(help, "\n  "+flag+" ") && !strings.Contains(help, "\n  "+flag+"\n") {
			t.Errorf("toy help train does not list %s:\n%s", flag, help)
		}
	}
	for _, args := range [][]string{{"train", "--help"}, {"train", "-h"}, {"train", "from-scratch", "--help"}, {"train", "lora", "--help"}} {
		if status, out, _ := runToy(args...); status != 0 || out != help {
			t.Errorf("%v: %d\n%s", args, status, out)
		}
	}
	if status, _, errs := runToy("train"); status != 2 || !strings.Contains(errs, "toy help train") {
		t.Errorf("train without a recipe: %d %q", status, errs)
	}
}
