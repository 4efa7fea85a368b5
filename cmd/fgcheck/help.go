package main

// The examples every subcommand's -h prints after its flags. Each line is a
// complete command; TestHelpExamplesParse runs every one with -h appended,
// so an example that names a flag the command does not have fails the
// tests.

var examples = map[string][]string{
	"explore": {
		"fgcheck explore                                   # std on latest: the default job",
		"fgcheck explore --variant v6.11 --workers 0       # another kernel, all cores",
		"fgcheck explore --mutant M-push-1                 # a seeded bug: exit 1, schedule saved",
		"fgcheck explore --strict --fix no-bit0,reserve-irqoff,retp-guard,no-transition",
		"fgcheck explore -K 3 -C 3 --time 10m --checkpoint big.ckpt   # a bigger bound, resumable",
		"fgcheck explore --shard 2/4 --json                # one job of a CI matrix",
		"fgcheck explore --scenario corpus/irq-before-w3-clobbers-ret.txt --bound K=2",
		"fgcheck explore --kernel ~/src/linux               # the tree's own compiled fgraph.c",
		"fgcheck explore --kernel .cache/kernel/linux-source-6.12 --mutant M-push-2",
	},
	"diff": {
		"fgcheck diff --kernel .cache/kernel/linux-source-6.12   # std and the corpus, v6.12 against the tree",
		"fgcheck diff --kernel ~/src/linux --variant latest --scenario std --max-runs 5000",
		"fgcheck diff --kernel ~/src/linux --json",
	},
	"random": {
		"fgcheck random --runs 1000000 --workers 0 --seed 7",
		"fgcheck random --mode pct --variant seed --time 5m --keep-going",
		"fgcheck random --mutant M-ret-1 --json",
	},
	"replay": {
		"fgcheck replay corpus/irq-before-w3-clobbers-ret.txt",
		"fgcheck replay fgcheck-out/latest-M-push-1-unwinder-1a2b3c4d.txt --json",
		"fgcheck replay corpus/kernel-bit0-retfunc-for-unaccepted-frame.txt --strict",
		"fgcheck replay corpus/irq-before-w3-clobbers-ret.txt --html irq.html   # the page: timeline, pictures, violation",
		"fgcheck replay --kernel ~/src/linux fgcheck-out/v6.12-baseline-ret-addr-b47a6d08.txt",
	},
	"minimize": {
		"fgcheck minimize fgcheck-out/latest-M-push-1-unwinder-1a2b3c4d.txt -o small.txt",
		"fgcheck minimize corpus/kernel-bit0-retfunc-for-unaccepted-frame.txt --known F1-bit0",
	},
	"mutants": {
		"fgcheck mutants                                   # the mutation-score table",
		"fgcheck mutants --mutant M-push-1,M-ret-1 --json",
		"fgcheck mutants --variant v6.11 --markdown --workers 0",
	},
	"fmt": {
		"fgcheck fmt corpus/irq-before-w3-clobbers-ret.txt",
		"fgcheck fmt -l corpus/*.txt                       # list the files not in canonical form",
		"fgcheck fmt -w my-schedule.txt",
	},
	"scenarios": {
		"fgcheck scenarios                                 # the built-in scenarios",
		"fgcheck scenarios corpus/                         # and the schedule files of a directory",
		"fgcheck scenarios --json corpus/",
	},
	"version": {
		"fgcheck version",
		"fgcheck version --json",
	},
}
