package main

import (
	"context"
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
)

// bundleFlags are the flags that load bundles beside, or in place of, the built-in ones.
type bundleFlags struct {
	sources   []string
	keyFile   string
	alg       string
	tokenFile string
	caFile    string
	timeout   time.Duration
	limits    limitFlags
}

// limitFlags bound each policy evaluation, so a custom rule that runs away ends the command
// with its pack named instead of running for minutes and gigabytes.
type limitFlags struct {
	timeout   time.Duration
	memoryMiB int
}

func (l *limitFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.DurationVar(&l.timeout, "policy-timeout", engine.DefaultTimeout, "longest one policy evaluation may run before it is stopped with the pack that ran away named")
	fl.IntVar(&l.memoryMiB, "policy-memory", engine.DefaultMemory>>20, "MiB the heap may grow by during one policy evaluation before it is stopped with the pack named")
}

func (l *limitFlags) engineOption() (engine.Option, error) {
	if l.timeout <= 0 {
		return nil, fmt.Errorf("--policy-timeout %s: want a positive duration", l.timeout)
	}
	if l.memoryMiB <= 0 {
		return nil, fmt.Errorf("--policy-memory %d: want a positive number of MiB", l.memoryMiB)
	}
	return engine.WithLimits(engine.Limits{Timeout: l.timeout, Memory: uint64(l.memoryMiB) << 20}), nil
}

// withLimitFlag names the flag that raises the bound an evaluation crossed.
func withLimitFlag(err error) error { return engine.WithLimitFlag(err) }

// register adds the flags to cmd. The key flags are spelled as OPA spells them (opa run, opa
// build) and as bundle sign and verify spell them: --verification-key, --signing-alg.
func (b *bundleFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&b.sources, "bundle", nil, "policy bundle: a .tar.gz, a bundle directory or an http(s) URL (repeatable); one with the roots of a built-in bundle (rules, kb) replaces it")
	fl.StringVar(&b.keyFile, "verification-key", "", "PEM public key every --bundle must be signed with (required for URLs)")
	fl.StringVar(&b.alg, "signing-alg", "", "JWA algorithm the bundles were signed with (default: RS256 for RSA keys, ES256/384/512 for EC keys)")
	fl.StringVar(&b.tokenFile, "bundle-token-file", "", "file holding a bearer token for bundle URLs, read again for every request")
	fl.StringVar(&b.caFile, "bundle-ca-file", "", "PEM bundle trusted for https bundle URLs, besides the system roots")
	fl.DurationVar(&b.timeout, "bundle-timeout", bundles.DefaultTimeout, "overall deadline of each --bundle URL fetch: connecting, waiting and reading")
	completeValues(cmd, "signing-alg", signingAlgs...)
	deprecatedAlias(cmd, "bundle-verification-key", "verification-key")
	deprecatedAlias(cmd, "bundle-verification-alg", "signing-alg")
	b.limits.register(cmd)
}

// verification is the signature check every loaded bundle passes; nil without a key.
func (b *bundleFlags) verification() (*bundle.VerificationConfig, error) {
	if b.keyFile == "" {
		for _, src := range b.sources {
			if bundles.IsURL(src) {
				return nil, fmt.Errorf("--bundle %s: bundles fetched over the network must be signed; pass --verification-key", bundles.SanitizedURL(src))
			}
		}
		return nil, nil
	}
	vc, err := bundles.VerificationFromFile(b.keyFile, b.alg)
	if err != nil {
		return nil, fmt.Errorf("--verification-key: %w", err)
	}
	return vc, nil
}

func (b *bundleFlags) remote() bundles.Remote {
	return bundles.Remote{TokenFile: b.tokenFile, CAFile: b.caFile, Timeout: b.timeout}
}

// engineOptions are the evaluation bounds and every --bundle, fetched and verified; the first
// that fails stops the command.
func (b *bundleFlags) engineOptions(ctx context.Context) ([]engine.Option, error) {
	limits, err := b.limits.engineOption()
	if err != nil {
		return nil, err
	}
	fetched, err := b.fetch(ctx)
	if err != nil {
		return nil, err
	}
	return append([]engine.Option{limits}, bundleOptions(fetched)...), nil
}

// fetch reads every --bundle, verified.
func (b *bundleFlags) fetch(ctx context.Context) ([]*bundles.Fetched, error) {
	if len(b.sources) == 0 {
		return nil, nil
	}
	if b.timeout <= 0 {
		return nil, fmt.Errorf("--bundle-timeout %s: want a positive duration", b.timeout)
	}
	vc, err := b.verification()
	if err != nil {
		return nil, err
	}
	var out []*bundles.Fetched
	for _, src := range b.sources {
		f, err := bundles.Fetch(ctx, src, b.remote(), vc)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func bundleOptions(fetched []*bundles.Fetched) []engine.Option {
	var opts []engine.Option
	for _, f := range fetched {
		opts = append(opts, engine.WithBundle(f.Source, f.Bundle, f.Signature))
	}
	return opts
}
