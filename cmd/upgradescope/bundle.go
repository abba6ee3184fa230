package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/loopback"
	"github.com/upgradescope/upgradescope/internal/smallfile"
)

func newBundleCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Build, sign, verify and inspect policy bundles (ordinary OPA bundles)",
	}
	cmd.AddCommand(newBundleBuildCommand(), newBundleSignCommand(), newBundleVerifyCommand(s), newBundleInspectCommand(s),
		newBundleServeCommand(s), newBundleDryRunCommand(s))
	return cmd
}

func newBundleBuildCommand() *cobra.Command {
	var out, revision string
	cmd := &cobra.Command{
		Use:   "build DIR -o OUT.tar.gz",
		Short: "Build a bundle from a directory with a .manifest; Rego tests are left out",
		Example: `  upgradescope bundle build policies/kb -o kb.tar.gz --revision 2027-01-05.1
  upgradescope bundle build examples/policies -o acme.tar.gz`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeDirs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var buf bytes.Buffer
			if err := bundles.Build(args[0], revision, &buf); err != nil {
				return err
			}
			if err := loadsBesideBuiltins(cmd.Context(), args[0], buf.Bytes()); err != nil {
				return err
			}
			return writeOutput(out, buf.Bytes())
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "bundle file to write")
	cmd.Flags().StringVar(&revision, "revision", "", "revision stamped in the manifest (default: the .manifest's, else a digest of the content)")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

// loadsBesideBuiltins compiles the built bundle with the built-in ones, as scan and the agent
// will: type errors, modules outside the roots, overlaps and a rule set that cannot produce a
// report are found at build time, not on the agent.
func loadsBesideBuiltins(ctx context.Context, dir string, tarball []byte) error {
	b, err := bundles.Read(bytes.NewReader(tarball), nil)
	if err != nil {
		return err
	}
	if _, err := engine.New(ctx, engine.WithBundle(dir, &b, "")); err != nil {
		return fmt.Errorf("bundle build %s: it does not load beside the built-in bundles: %w", dir, err)
	}
	return nil
}

func newBundleSignCommand() *cobra.Command {
	var out, key, alg, claims string
	cmd := &cobra.Command{
		Use:     "sign BUNDLE.tar.gz --signing-key KEY.pem -o OUT.tar.gz",
		Short:   "Sign every file of a bundle (.signatures.json), as opa build --signing-key does",
		Example: "  upgradescope bundle sign builtin.tar.gz --signing-key private.pem -o builtin.signed.tar.gz",
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			var buf bytes.Buffer
			err := readBundleFile(args[0], func(in io.Reader) error { return bundles.Sign(in, &buf, key, alg, claims) })
			if err != nil {
				return err
			}
			return writeOutput(out, buf.Bytes())
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "signed bundle file to write")
	cmd.Flags().StringVar(&key, "signing-key", "", "PEM private key file (RSA or EC)")
	cmd.Flags().StringVar(&alg, "signing-alg", "", "JWA algorithm to sign with: RS256, ES256, … (default: from the key type)")
	cmd.Flags().StringVar(&claims, "claims-file", "", "JSON file of extra claims for the signature")
	completeValues(cmd, "signing-alg", signingAlgs...)
	_ = cmd.MarkFlagRequired("output")
	_ = cmd.MarkFlagRequired("signing-key")
	return cmd
}

func newBundleVerifyCommand(s streams) *cobra.Command {
	var key, alg string
	cmd := &cobra.Command{
		Use:     "verify BUNDLE.tar.gz --verification-key PUBLIC.pem",
		Short:   "Check a bundle's signature covers every file and was made with the key, as opa build --verification-key does",
		Example: "  upgradescope bundle verify builtin.signed.tar.gz --verification-key public.pem",
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			// Checked here, not with MarkFlagRequired, so that the old --key still counts.
			if key == "" {
				return errors.New(`required flag "verification-key" not set`)
			}
			vc, err := bundles.VerificationFromFile(key, alg)
			if err != nil {
				return fmt.Errorf("--verification-key: %w", err)
			}
			return readBundleFile(args[0], func(in io.Reader) error {
				b, err := bundles.Read(in, vc)
				if err == nil {
					fmt.Fprintf(s.out, "%s: signature verified (revision %s)\n", args[0], b.Manifest.Revision)
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&key, "verification-key", "", "PEM public key file (required)")
	cmd.Flags().StringVar(&alg, "signing-alg", "", "JWA algorithm the bundle was signed with (default: from the key type)")
	completeValues(cmd, "signing-alg", signingAlgs...)
	deprecatedAlias(cmd, "key", "verification-key")
	deprecatedAlias(cmd, "alg", "signing-alg")
	return cmd
}

func newBundleInspectCommand(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect BUNDLE.tar.gz",
		Short: "Print a bundle's revision, roots, metadata, files and whether it is signed (JSON)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return readBundleFile(args[0], func(in io.Reader) error {
				sum, err := bundles.Inspect(in)
				if err != nil {
					return err
				}
				enc := json.NewEncoder(s.out)
				enc.SetIndent("", "  ")
				return enc.Encode(sum)
			})
		},
	}
}

// readBundleFile opens path for use, refusing a FIFO or a device rather than waiting on it;
// an error names the file.
func readBundleFile(path string, use func(io.Reader) error) error {
	in, err := bundles.Open(path)
	if err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return err // it names the file
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	defer in.Close()
	if err := use(in); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// writeOutput creates path 0600 (a bundle may hold a team's private rules).
func writeOutput(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func newBundleServeCommand(s streams) *cobra.Command {
	var listenAddr, tokenFile string
	cmd := &cobra.Command{
		Use:               "serve DIR",
		Short:             "Serve the *.tar.gz bundles of DIR with OPA's bundle service protocol (ETag, 304, long polling)",
		Example:           "  upgradescope bundle serve ./bundles --listen 127.0.0.1:8282 --bundle-token-file token",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeDirs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A mistyped DIR would otherwise serve 404s to every agent until someone looked.
			if info, err := os.Stat(args[0]); err != nil {
				return fmt.Errorf("bundle serve: %w", err)
			} else if !info.IsDir() {
				return fmt.Errorf("bundle serve: %s is a file; want the directory that holds the bundles", args[0])
			}
			var opts bundles.ServeOptions
			if tokenFile != "" {
				raw, err := smallfile.Read(tokenFile, smallfile.MaxSecret)
				if err != nil {
					return fmt.Errorf("--bundle-token-file: %w", err)
				}
				opts.Token = strings.TrimSpace(string(raw))
			}
			ln, err := net.Listen("tcp", listenAddr)
			if err != nil {
				return fmt.Errorf("listen on --listen %s: %w", listenAddr, err)
			}
			if !loopback.Is(ln.Addr().String()) && opts.Token == "" {
				fmt.Fprintf(s.err, "warning: serving on %s, beyond this machine, without --bundle-token-file: anyone who can reach it can download the bundles\n", ln.Addr())
			}
			fmt.Fprintf(s.err, "serving bundles from %s on http://%s\n", args[0], ln.Addr())
			srv := &http.Server{Handler: bundles.Handler(args[0], opts), ReadHeaderTimeout: 5 * time.Second}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			go func() { <-ctx.Done(); _ = srv.Close() }()
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listenAddr, "listen", "127.0.0.1:8282", "address to listen on (loopback by default)")
	cmd.Flags().StringVar(&tokenFile, "bundle-token-file", "", "file holding a bearer token every request must carry (agents send it with their --bundle-token-file)")
	deprecatedAlias(cmd, "addr", "listen")
	deprecatedAlias(cmd, "token-file", "bundle-token-file")
	return cmd
}
