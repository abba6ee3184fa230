// Package engine evaluates the rule bundles over an inventory. It does no I/O beyond reading
// the bundles it is given, and no clock reads: the caller passes now.
package engine

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/upgradescope/upgradescope/engine/facts"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/report"
)

// Query is the one query the engine prepares.
const Query = "data.upgradescope.report.result"

// refusedBuiltins are refused to every module. The network ones (http.send, DNS lookups,
// signing requests, fetching certificate chains) and reading the runtime would make custom
// Rego reach outside; the clock and randomness would make the same inventory, bundles and
// input.now give different reports; strings.render_template runs the loops its template and
// data choose in one call, which no bound can size and no deadline interrupts. The one list
// scan, eval and policy test all refuse; see RefusedBuiltins.
var refusedBuiltins = map[string]struct{}{
	"http.send": {}, "net.lookup_ip_addr": {}, "net.cidr_expand": {}, "opa.runtime": {},
	"providers.aws.sign_req": {}, "crypto.x509.parse_and_verify_certificates_with_options": {},
	"time.now_ns": {}, "rand.intn": {}, "uuid.rfc4122": {},
	"strings.render_template": {},
}

// RefusedBuiltins returns the builtins the engine refuses to every module, for other
// compilers of the same Rego (policy test) to refuse too. The map is a copy.
func RefusedBuiltins() map[string]struct{} { return maps.Clone(refusedBuiltins) }

// Engine holds a prepared query. Evaluate is safe for concurrent use.
type Engine struct {
	pq      rego.PreparedEvalQuery
	bundles []report.BundleInfo
	kb      *kb.KB
	// observe is what collectors observe with these bundles, probes included.
	observe kb.Observe
	// knowledge is what input.facts needs from the bundles.
	knowledge   facts.Knowledge
	toolVersion string
	limits      Limits
	packs       packFiles
}

type config struct {
	builtin       []namedFS
	bundles       []given
	custom        []string
	toolVersion   string
	engineVersion string
	limits        Limits
}

type given struct {
	origin    string
	b         *bundle.Bundle
	signature string
}

// Option configures New.
type Option func(*config)

// WithPolicy adds a custom pack: a directory of Rego or a bundle tarball rooted at
// upgradescope/custom/<name>.
func WithPolicy(path string) Option { return func(c *config) { c.custom = append(c.custom, path) } }

// WithBundle adds a bundle the caller has read (and verified): one whose roots are exactly a
// built-in bundle's replaces it, any other is a custom pack. origin (a path or URL) names it
// in errors and reports; signature (report.Signature*, "" for an unsigned bundle) says what
// the caller checked.
func WithBundle(origin string, b *bundle.Bundle, signature string) Option {
	return func(c *config) { c.bundles = append(c.bundles, given{origin, b, signature}) }
}

// WithBuiltin replaces the embedded built-in bundles (tests build older or broken ones).
func WithBuiltin(name string, fsys fs.FS) Option {
	return func(c *config) { c.builtin = append(c.builtin, namedFS{name, fsys}) }
}

// WithToolVersion names the tool version reports carry.
func WithToolVersion(v string) Option { return func(c *config) { c.toolVersion = v } }

// WithEngineVersion overrides Version, the version bundles' minEngineVersion is checked
// against.
func WithEngineVersion(v string) Option { return func(c *config) { c.engineVersion = v } }

// New reads the bundles, compiles them once and prepares the report query.
func New(ctx context.Context, opts ...Option) (*Engine, error) {
	cfg := config{toolVersion: "dev", engineVersion: Version}
	for _, o := range opts {
		o(&cfg)
	}
	set, err := assemble(cfg)
	if err != nil {
		return nil, err
	}
	e := &Engine{toolVersion: cfg.toolVersion, limits: cfg.limits.withDefaults(), packs: packFiles{}}
	for _, l := range set {
		if !l.builtin {
			e.packs.addBundle(l)
		}
		if l.builtin && l.name == "kb" {
			if err := e.readKB(l); err != nil {
				return nil, err
			}
		}
		e.bundles = append(e.bundles, infoOf(l))
	}
	if e.kb == nil {
		return nil, fmt.Errorf("no kb bundle: the engine needs the knowledge base")
	}
	if err := e.buildObserve(set); err != nil {
		return nil, err
	}
	e.knowledge = e.factsKnowledge()
	if err := e.prepare(ctx, set); err != nil {
		return nil, err
	}
	if len(cfg.bundles) > 0 {
		if err := e.probe(ctx); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (e *Engine) prepare(ctx context.Context, set []loaded) error {
	// Bundle data is written into the store once, inside one transaction, and read back as
	// AST values on every evaluation.
	store := inmem.NewWithOpts(inmem.OptReturnASTValuesOnRead(true))
	txn, err := store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return err
	}
	regoOpts := []func(*rego.Rego){
		rego.Query(Query),
		rego.Store(store),
		rego.Transaction(txn),
		rego.UnsafeBuiltins(refusedBuiltins),
		rego.Strict(true),
		// The stack of a cancelled evaluation names the pack that ran away. OPA records a
		// stack only on an error raised through an expression, not on the builtin errors
		// that merely make an expression undefined, so an evaluation that ends well pays a
		// nil check per expression.
		rego.StackTraces(true),
	}
	for _, l := range set {
		regoOpts = append(regoOpts, rego.ParsedBundle(l.name, l.b))
	}
	pq, err := rego.New(regoOpts...).PrepareForEval(ctx)
	if err != nil {
		store.Abort(ctx, txn)
		return fmt.Errorf("compile policies: %w", err)
	}
	if err := store.Commit(ctx, txn); err != nil {
		return fmt.Errorf("activate bundles: %w", err)
	}
	e.pq = pq
	return nil
}

// probe evaluates an empty inventory once, so a bundle set that compiles but cannot produce a
// report (rules that need data a kb lacks, a report package replaced by one without result)
// is refused when it is loaded, not at the first scan.
func (e *Engine) probe(ctx context.Context) error {
	inv := &inventory.Document{SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceFiles, Capabilities: map[string]inventory.Capability{}}
	if _, err := e.Evaluate(ctx, inv, []string{e.kb.Meta().Horizon}, time.Unix(0, 0)); err != nil {
		return fmt.Errorf("bundles %s cannot produce a report: %w", e.describe(), err)
	}
	return nil
}

func (e *Engine) describe() string {
	parts := make([]string, len(e.bundles))
	for i, b := range e.bundles {
		parts[i] = b.Name + " " + b.Revision
	}
	return strings.Join(parts, ", ")
}

func infoOf(l loaded) report.BundleInfo {
	roots := []string{}
	if l.b.Manifest.Roots != nil {
		roots = append(roots, *l.b.Manifest.Roots...)
	}
	sort.Strings(roots)
	return report.BundleInfo{Name: l.name, Revision: l.b.Manifest.Revision, Source: l.origin, Signature: l.signature, Roots: roots}
}

// Bundles lists the bundles the engine evaluates, built-in first.
func (e *Engine) Bundles() []report.BundleInfo { return append([]report.BundleInfo(nil), e.bundles...) }

// EvalOption configures one Evaluate call.
type EvalOption func(*evalConfig)

type evalConfig struct {
	ignore   []report.IgnoreRule
	plan     bool
	planFrom string
}

// WithPlan asks for an upgrade plan: targets are consecutive minors after from, and the
// report says at which hop each finding first appears.
func WithPlan(from string) EvalOption {
	return func(c *evalConfig) { c.plan, c.planFrom = true, from }
}

// WithIgnore applies suppression rules.
func WithIgnore(rules []report.IgnoreRule) EvalOption {
	return func(c *evalConfig) { c.ignore = rules }
}

// Evaluate judges inv for each target minor ("1.37"). The same inventory, bundles and now
// give a byte-identical report. inv is not modified. An evaluation that crosses the engine's
// Limits returns a *LimitError naming the pack that ran away, and no report.
func (e *Engine) Evaluate(ctx context.Context, inv *inventory.Document, targets []string, now time.Time, opts ...EvalOption) (*report.Report, error) {
	var ec evalConfig
	for _, o := range opts {
		o(&ec)
	}
	input, err := e.input(inv, targets, now, ec).value()
	if err != nil {
		return nil, err
	}
	gctx, stop := e.limits.guard(ctx)
	defer stop()
	rs, err := e.pq.Eval(gctx, rego.EvalParsedInput(input), rego.EvalSortSets(true), rego.EvalGenerateJSON(resultValue))
	if err != nil {
		err = e.limitError(gctx, err)
		if le, ok := err.(*LimitError); ok && le.Pack == "" && le.Builtin == "" {
			le.Input = largeInput(inv, len(ec.ignore))
		}
		return nil, fmt.Errorf("evaluate policies: %w", err)
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return nil, fmt.Errorf("evaluate policies: %s is undefined; a loaded bundle broke the report package", Query)
	}
	return e.decode(rs[0].Expressions[0].Value, inv, now)
}

type result struct {
	Targets        []report.TargetResult `json:"targets"`
	Plan           []report.Hop          `json:"plan"`
	ExpiredIgnores []report.IgnoreRule   `json:"expiredIgnores"`
}

func (e *Engine) decode(v any, inv *inventory.Document, now time.Time) (*report.Report, error) {
	value, ok := v.(ast.Value)
	if !ok {
		return nil, fmt.Errorf("read report: got %T, want the value resultValue passes", v)
	}
	// Findings that break the contract are read first, so the error names their pack and
	// what is wrong with them rather than where the report could not be read.
	if obj, ok := value.(ast.Object); ok {
		if t := obj.Get(ast.StringTerm("invalidFindings")); t != nil {
			var invalid []invalidFinding
			if err := fromAST(t.Value, reflect.ValueOf(&invalid).Elem()); err != nil {
				return nil, fmt.Errorf("read report: invalidFindings: %w", err)
			}
			if len(invalid) > 0 {
				return nil, contractError(invalid)
			}
		}
	}
	var r result
	if err := fromAST(value, reflect.ValueOf(&r).Elem()); err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	attributeTeams(r.Targets, inv)
	attachChartFixes(r.Targets, inv, e.observe)
	return &report.Report{
		SchemaVersion:        report.SchemaVersion,
		ToolVersion:          e.toolVersion,
		EvaluatedAt:          now.UTC().Format(time.RFC3339),
		Source:               inv.Source,
		ClusterID:            inv.ClusterID,
		ServerVersion:        inv.ServerVersion,
		FilesBase:            inv.FilesBase,
		FilesExcluded:        inv.FilesExcluded,
		FilesExcludedOmitted: inv.FilesExcludedOmitted,
		Bundles:              e.Bundles(),
		KB:                   e.kb.Meta(),
		Targets:              r.Targets,
		Plan:                 r.Plan,
		ExpiredIgnores:       r.ExpiredIgnores,
	}, nil
}
