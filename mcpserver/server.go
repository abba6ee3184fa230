// Package mcpserver answers an AI assistant's questions about upgrade readiness over the
// Model Context Protocol, through the official Go SDK: read-only tools over the engine, the
// collectors and the fleet API. Every answer is bounded (MaxAnswer) and names the bundle
// revisions it was judged with; the rest is paged.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Config is what a server may read and how much it may spend. Everything is fixed at start:
// an assistant chooses among the inputs given here, never widens them.
type Config struct {
	// Engine judges every scan: the built-in bundles and the user's --policy packs.
	Engine *engine.Engine
	// Root is the directory manifests and inventory files are read under; nothing outside
	// it is read, a symlink leading out included.
	Root string
	// Ignore are the suppression rules of --config, loaded at start, and IgnoreSource the
	// file they came from. Without them, FindIgnore looks for .upgradescope.yaml beside what
	// each scan reads, else at the root, as scan looks beside its input and then in the
	// working directory.
	Ignore       []report.IgnoreRule
	IgnoreSource string
	FindIgnore   bool
	// Files bounds a walk of manifests as scan --files is bounded.
	Files FilesBudget
	// Cluster collects the cluster of the kubeconfig context chosen at start; nil when there
	// is none. ClusterName is how answers name it (the context).
	Cluster     func(ctx context.Context) (*inventory.Document, error)
	ClusterName string
	// Fleet reads a fleet server with a read token; nil when no --server was given.
	Fleet *client.Client
	// MaxConcurrent caps tool calls running at once; more wait their turn.
	MaxConcurrent int
	// Now is the evaluation clock (tests pin it); nil is time.Now.
	Now func() time.Time
	// Version is the tool's version, as the MCP handshake names it.
	Version string
}

// FilesBudget is what one walk of manifests may spend: bytes read in all and time.
type FilesBudget struct {
	MaxBytes  int64
	Timeout   time.Duration
	TeamLabel string
}

// Server is the MCP server with upgradescope's tools; safe for concurrent sessions.
type Server struct {
	cfg   Config
	root  string // cfg.Root with symlinks resolved
	mcp   *mcp.Server
	slots chan struct{}
	scans *scans
	// dryRuns keeps the last dry runs for their pages.
	dryRuns dryRuns
	// fixes keeps the last fix plan explain_finding made.
	fixes fixCache
}

// New checks cfg and registers the tools.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil {
		return nil, errors.New("mcp server: no engine")
	}
	root, err := realDir(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("--root %w", err)
	}
	if cfg.MaxConcurrent <= 0 {
		return nil, fmt.Errorf("--max-concurrent %d: want at least 1", cfg.MaxConcurrent)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, root: root, slots: make(chan struct{}, cfg.MaxConcurrent), scans: newScans(maxScansKept)}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "upgradescope", Title: "upgradescope", Version: clip(cfg.Version, maxVersion)},
		&mcp.ServerOptions{Instructions: instructions})
	s.mcp.AddReceivingMiddleware(boundErrors)
	s.register()
	return s, nil
}

const instructions = `upgradescope judges whether a Kubernetes cluster can move to a target minor version. ` +
	`Start with scan (manifests, an inventory file or the configured cluster), then list_findings and explain_finding ` +
	`to read the rest; plan_upgrade walks one minor at a time. Every answer is small and paged: follow "next".`

// MCP is the SDK server, for a transport to run.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// RunStdio serves one client on in and out (the process's stdin and stdout) until ctx ends
// or the client closes in.
func (s *Server) RunStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// register adds every tool; each is read-only and answers within MaxAnswer.
func (s *Server) register() {
	addTool(s, scanTool, s.scan)
	addTool(s, listFindingsTool, s.listFindings)
	addTool(s, explainFindingTool, s.explainFinding)
	addTool(s, planUpgradeTool, s.planUpgrade)
	addTool(s, registryLookupTool, s.registryLookup)
	addTool(s, fleetSummaryTool, s.fleetSummary)
	addTool(s, fleetFindingsTool, s.fleetFindings)
	addTool(s, dryRunTool, s.dryRunBundle)
}

// realDir is dir made absolute with symlinks resolved, and checked to be a directory.
func realDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if os.IsNotExist(err) {
		return "", fmt.Errorf("%s: no such directory", dir)
	}
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(real); err != nil || !info.IsDir() {
		return "", fmt.Errorf("%s: not a directory", dir)
	}
	return real, nil
}
