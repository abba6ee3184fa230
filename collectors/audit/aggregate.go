package audit

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/upgradescope/upgradescope/inventory"
)

// maxKeptBytes bounds the strings an aggregation keeps (callers' keys, their ranges, the
// Omitted rows' APIs), as a backstop: with the keys' strings checked and cut while reading
// (keyOf), MaxAuditTracked callers keep under 30 MB. A caller or API past it is counted as
// one past the count bounds is.
const maxKeptBytes = 64 << 20

// apiKey is one API a request was to.
type apiKey struct{ group, version, resource, subresource string }

// callerKey is one caller of one API: the section's AuditCaller key.
type callerKey struct {
	api                   apiKey
	verb, user, userAgent string
}

func (k apiKey) size() int {
	return len(k.group) + len(k.version) + len(k.resource) + len(k.subresource)
}

func (k callerKey) size() int { return k.api.size() + len(k.verb) + len(k.user) + len(k.userAgent) }

func compareAPIs(a, b apiKey) int {
	return cmp.Or(strings.Compare(a.group, b.group), strings.Compare(a.version, b.version),
		strings.Compare(a.resource, b.resource), strings.Compare(a.subresource, b.subresource))
}

func compareCallers(a, b callerKey) int {
	return cmp.Or(compareAPIs(a.api, b.api), strings.Compare(a.verb, b.verb),
		strings.Compare(a.user, b.user), strings.Compare(a.userAgent, b.userAgent))
}

// caller is what is counted for one callerKey. Times are AuditTime strings, which compare as
// the times do.
type caller struct {
	ranges         []string
	rangesOmitted  int
	removedRelease string
	count          int64
	first, last    string
}

// omittedAPI is what is counted for the callers of one API past those kept or listed.
type omittedAPI struct {
	callers, calls int64
	removedRelease string
	last           string
}

// kubectlVersion is what is counted for one kubectl version.
type kubectlVersion struct {
	count        int64
	users        []string
	usersOmitted int
	last         string
}

// Aggregator counts events per caller within bounds (inventory.MaxAuditTracked and the
// section's bounds).
//
// An Aggregator is not safe for concurrent use. Its memory is bounded whatever it reads:
// MaxAuditTracked callers, MaxAuditAPIs Omitted rows and MaxKubectlVersions versions, their
// strings within inventory.MaxStringLength and, together, within maxKeptBytes.
type Aggregator struct {
	since string

	events, requests, deprecated int64
	// ownReads counts the deprecated requests that were upgradescope's own reads (ownRead).
	ownReads int64

	malformed   int64
	malformedAt []string

	sources        []inventory.AuditSource
	sourcesOmitted int
	// current indexes the source being read in sources; -1 when none is, or it is past
	// MaxAuditSources.
	current int
	formats []string // of the current source, in reading order

	callers map[callerKey]*caller
	// untracked counts the calls of callers first seen past MaxAuditTracked (or
	// maxKeptBytes): counted only in their API's Omitted row.
	untracked   int64
	omitted     map[apiKey]*omittedAPI
	omittedAPIs int64

	kubectl        map[string]*kubectlVersion
	kubectlOmitted int64

	kept int // bytes of the strings kept, against maxKeptBytes
}

// NewAggregator starts an empty aggregation whose window starts at since.
func NewAggregator(since time.Time) *Aggregator {
	return &Aggregator{
		since:   formatTime(since),
		current: -1,
		callers: map[callerKey]*caller{},
		omitted: map[apiKey]*omittedAPI{},
		kubectl: map[string]*kubectlVersion{},
	}
}

// formatTime writes t as inventory.AuditTime. The year is clamped to the four digits the
// format has: a window start is never that far away.
func formatTime(t time.Time) string {
	t = t.UTC()
	if t.Year() < 0 {
		t = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	} else if t.Year() > 9999 {
		t = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	}
	return t.Format(inventory.AuditTime)
}

// parseTime reads an event's stageTimestamp: RFC 3339, with or without fractional seconds,
// in any offset. A time whose UTC year has more than four digits is refused: the section's
// times do not hold it.
func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false
	}
	t = t.UTC()
	return t, t.Year() >= 0 && t.Year() <= 9999
}

// Add counts one event. An event whose stageTimestamp is missing or not RFC 3339 is counted
// as malformed, named by its reason alone: Add knows no file or line.
func (a *Aggregator) Add(e *Event) {
	if reason := a.add(e); reason != "" {
		a.countMalformed("", reason)
	}
}

// add counts e and answers why it is malformed, or "". A malformed event is counted
// nowhere else.
func (a *Aggregator) add(e *Event) string {
	t, ok := parseTime(e.StageTimestamp)
	if !ok {
		if e.StageTimestamp == "" {
			return "no stageTimestamp"
		}
		return "stageTimestamp is not an RFC 3339 time"
	}
	// The other stages repeat a request a ResponseComplete or Panic event ends; a provider's
	// export holds one entry per request and no stage.
	request := e.Stage == "" || e.Stage == "ResponseComplete" || e.Stage == "Panic"
	deprecated := request && e.Annotations[AnnotationDeprecated] == "true"
	var k callerKey
	if deprecated {
		var reason string
		if k, reason = keyOf(e); reason != "" {
			return reason
		}
	}
	a.events++
	if a.current >= 0 {
		a.sources[a.current].Events++
	}
	if !request {
		return ""
	}
	a.requests++
	var at string // formatted only for the requests that need it
	if strings.HasPrefix(e.UserAgent, kubectlPrefix) {
		at = t.Truncate(time.Second).Format(inventory.AuditTime)
		a.countKubectl(e, at)
	}
	if !deprecated {
		return ""
	}
	a.deprecated++
	if ownRead(e) {
		a.ownReads++
		return ""
	}
	if at == "" {
		at = t.Truncate(time.Second).Format(inventory.AuditTime)
	}
	a.countCaller(k, e, at)
	return ""
}

// ownAgent starts the user agent of upgradescope's own requests (cluster.UserAgent).
const ownAgent = "upgradescope/"

// ownRead tells upgradescope's own reads: a scan lists every served version of a kind, a
// deprecated one included, and would otherwise be a caller of the API it warns about, the
// only one once the user's clients have moved. A client claiming upgradescope's user agent
// hides its reads from the callers: acceptable, as its reads still show in the API
// server's deprecated-request metric and hiding from us gains it nothing. Writes are never
// upgradescope's.
func ownRead(e *Event) bool {
	if !strings.HasPrefix(e.UserAgent, ownAgent) {
		return false
	}
	switch e.Verb {
	case "get", "list", "watch":
		return true
	}
	return false
}

// Bounds of a caller's strings, applied while reading, before keying, so that what is kept
// and what the rules compare stays small whatever the log holds. The API's fields are
// checked against what an API server writes (malformed otherwise); the rest are cut.
const (
	// maxVerb: Kubernetes' verbs are at most 16 characters; a webhook's custom ones a few
	// more.
	maxVerb = 64
	// maxIdentity bounds a user name and a user agent (inventory.AuditCaller).
	maxIdentity = 1024
)

// keyOf answers the caller of a request to a deprecated API, or why its API is not one an
// API server writes. The reason names the field, never its value.
func keyOf(e *Event) (callerKey, string) {
	r := e.ObjectRef
	if r == nil {
		return callerKey{}, "a request to a deprecated API with no objectRef"
	}
	api := apiKey{group: r.APIGroup, version: r.APIVersion, resource: r.Resource, subresource: r.Subresource}
	if reason := api.invalid(); reason != "" {
		return callerKey{}, reason
	}
	return callerKey{
		api:       api,
		verb:      cutString(e.Verb, maxVerb),
		user:      cutString(e.User.Username, maxIdentity),
		userAgent: cutString(e.UserAgent, maxIdentity),
	}, ""
}

// invalid answers why k is not an API as an API server names it, or "": a group is a DNS
// subdomain (or "" for the core group); a version, a resource and a subresource are DNS
// labels (CRDs' plurals are DNS-1035 labels; built-in resources such as servicecidrs and
// subresources such as status and approval are too).
func (k apiKey) invalid() string {
	switch {
	case k.group != "" && !isSubdomain(k.group):
		return "objectRef.apiGroup is not an API group (a DNS subdomain)"
	case k.version == "":
		return "a request to a deprecated API with no objectRef.apiVersion"
	case !isLabel(k.version):
		return "objectRef.apiVersion is not an API version (a DNS label)"
	case k.resource == "":
		return "a request to a deprecated API with no objectRef.resource"
	case !isLabel(k.resource):
		return "objectRef.resource is not a resource name (a DNS label)"
	case k.subresource != "" && !isLabel(k.subresource):
		return "objectRef.subresource is not a subresource name (a DNS label)"
	}
	return ""
}

// isSubdomain and isLabel check the length first: the patterns would read a hostile field
// whole.
func isSubdomain(s string) bool {
	return len(s) <= validation.DNS1123SubdomainMaxLength && len(validation.IsDNS1123Subdomain(s)) == 0
}

func isLabel(s string) bool {
	return len(s) <= validation.DNS1123LabelMaxLength && len(validation.IsDNS1123Label(s)) == 0
}

// cutString is s within n characters. It may share s's memory: what is kept is cloned
// (callerKey.clone), so that a cut string does not hold the record's field alive.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func (k apiKey) clone() apiKey {
	return apiKey{strings.Clone(k.group), strings.Clone(k.version), strings.Clone(k.resource), strings.Clone(k.subresource)}
}

func (k callerKey) clone() callerKey {
	return callerKey{k.api.clone(), strings.Clone(k.verb), strings.Clone(k.user), strings.Clone(k.userAgent)}
}

// removedRelease is e's k8s.io/removed-release as MAJOR.MINOR ("v1.22" and "1.22.0" are
// "1.22"), or "" when it is not a version.
func removedRelease(e *Event) string {
	s := e.Annotations[AnnotationRemovedRelease]
	if s == "" || len(s) > 32 {
		return ""
	}
	v, err := inventory.ParseVersion(s)
	if err != nil {
		return ""
	}
	return v.MinorString()
}

func (a *Aggregator) countCaller(k callerKey, e *Event, at string) {
	removed := removedRelease(e)
	c := a.callers[k]
	if c == nil {
		if len(a.callers) >= inventory.MaxAuditTracked || !a.keep(k.size()+len(removed)) {
			a.untracked++
			a.omit(k.api, omittedAPI{calls: 1, removedRelease: removed, last: at}, true)
			return
		}
		c = &caller{first: at, last: at, removedRelease: removed}
		a.callers[k.clone()] = c
	}
	c.count++
	c.first, c.last = min(c.first, at), max(c.last, at)
	c.removedRelease = minRelease(c.removedRelease, removed)
	for _, ip := range e.SourceIPs {
		a.countRange(c, ip)
	}
}

// minRelease is the smaller of two removed-release annotations, ignoring empty ones, so
// that the one kept does not depend on reading order.
func minRelease(a, b string) string {
	if a == "" || (b != "" && earlierRelease(b, a)) {
		return b
	}
	return a
}

// earlierRelease compares two MAJOR.MINOR releases as versions ("1.9" before "1.22").
func earlierRelease(x, y string) bool {
	vx, errX := inventory.ParseVersion(x)
	vy, errY := inventory.ParseVersion(y)
	if errX != nil || errY != nil {
		return x < y
	}
	return cmp.Or(cmp.Compare(vx.Major, vy.Major), cmp.Compare(vx.Minor, vy.Minor)) < 0
}

// countRange adds the /24 or /64 around ip to c's ranges. The ranges past MaxAuditRanges
// are counted per request, not per range: telling a new range from a seen one would take
// the memory the bound saves (as APIUsage.NamespacesOmitted counts objects).
func (a *Aggregator) countRange(c *caller, ip string) {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return
	}
	addr = addr.Unmap().WithZone("")
	bits := 64
	if addr.Is4() {
		bits = 24
	}
	p, err := addr.Prefix(bits)
	if err != nil {
		return
	}
	r := p.String()
	if slices.Contains(c.ranges, r) {
		return
	}
	if len(c.ranges) >= inventory.MaxAuditRanges || !a.keep(len(r)) {
		c.rangesOmitted++
		return
	}
	c.ranges = append(c.ranges, r)
}

// keep answers whether n more bytes of strings fit maxKeptBytes, and counts them if so.
func (a *Aggregator) keep(n int) bool {
	if a.kept+n > maxKeptBytes {
		return false
	}
	a.kept += n
	return true
}

// omit adds o to api's Omitted row, making one if MaxAuditAPIs (and, when bounded,
// maxKeptBytes) allow; past them the calls go to OmittedAPIs.
func (a *Aggregator) omit(api apiKey, o omittedAPI, bounded bool) {
	addOmitted(a.omitted, api, o, func() bool { return !bounded || a.keep(api.size()) }, &a.omittedAPIs)
}

func addOmitted(rows map[apiKey]*omittedAPI, api apiKey, o omittedAPI, room func() bool, apis *int64) {
	row := rows[api]
	if row == nil {
		if len(rows) >= inventory.MaxAuditAPIs || !room() {
			*apis += o.calls
			return
		}
		row = &omittedAPI{}
		rows[api.clone()] = row
	}
	row.callers += o.callers
	row.calls += o.calls
	row.removedRelease = minRelease(row.removedRelease, o.removedRelease)
	row.last = max(row.last, o.last)
}

// kubectlPrefix starts kubectl's user agent: "kubectl/v1.28.2 (linux/amd64) kubernetes/abcdef0".
const kubectlPrefix = "kubectl/"

// countKubectl counts a request by kubectl under its version. Users past MaxKubectlUsers
// are counted per request, as ranges are.
func (a *Aggregator) countKubectl(e *Event, at string) {
	version, _, _ := strings.Cut(e.UserAgent[len(kubectlPrefix):], " ")
	version = cutString(version, maxVerb)
	k := a.kubectl[version]
	if k == nil {
		if len(a.kubectl) >= inventory.MaxKubectlVersions || !a.keep(len(version)) {
			a.kubectlOmitted++
			return
		}
		k = &kubectlVersion{last: at}
		a.kubectl[strings.Clone(version)] = k
	}
	k.count++
	k.last = max(k.last, at)
	user := cutString(e.User.Username, maxIdentity)
	if slices.Contains(k.users, user) {
		return
	}
	if len(k.users) >= inventory.MaxKubectlUsers || !a.keep(len(user)) {
		k.usersOmitted++
		return
	}
	k.users = append(k.users, strings.Clone(user))
}

// countMalformed counts a record that is not an audit event, naming the first
// MaxAuditMalformed as "loc: reason". reason never quotes the record: audit events hold
// request bodies and tokens.
func (a *Aggregator) countMalformed(loc, reason string) {
	a.malformed++
	if a.current >= 0 {
		a.sources[a.current].Malformed++
	}
	if len(a.malformedAt) >= inventory.MaxAuditMalformed {
		return
	}
	if loc != "" {
		reason = loc + ": " + reason
	}
	a.malformedAt = append(a.malformedAt, inventory.BoundString(reason))
}

// beginSource starts counting what follows as read from path, adding to the source of the
// same path if one is listed (the server's webhook batches).
func (a *Aggregator) beginSource(path string) {
	path = inventory.BoundString(path)
	a.formats = a.formats[:0]
	if i := slices.IndexFunc(a.sources, func(s inventory.AuditSource) bool { return s.Path == path }); i >= 0 {
		a.current = i
		if f := a.sources[i].Format; f != "" {
			a.formats = strings.Split(f, ",")
		}
		return
	}
	if len(a.sources) >= inventory.MaxAuditSources {
		a.sourcesOmitted++
		a.current = -1
		return
	}
	a.sources = append(a.sources, inventory.AuditSource{Path: path})
	a.current = len(a.sources) - 1
}

// maxFormats bounds the formats one source names: a file is in one, a batch or a
// concatenation of exports in a few.
const maxFormats = 8

// sawFormat records that the current source holds records in format.
func (a *Aggregator) sawFormat(format string) {
	if a.current < 0 || format == "" || slices.Contains(a.formats, format) || len(a.formats) >= maxFormats {
		return
	}
	a.formats = append(a.formats, format)
	a.sources[a.current].Format = inventory.BoundString(strings.Join(a.formats, ","))
}

func (a *Aggregator) endSource() { a.current = -1 }

// Section is the aggregation so far, within the section's bounds, in a deterministic order:
// callers by count, busiest first, then by key; the callers past MaxAuditCallers are folded
// into their API's Omitted row. Section does not change a.
func (a *Aggregator) Section() *inventory.AuditCalls {
	s := &inventory.AuditCalls{
		Since:              a.since,
		Events:             a.events,
		Requests:           a.requests,
		DeprecatedRequests: a.deprecated,
		OwnReads:           a.ownReads,
		Malformed:          a.malformed,
		MalformedAt:        slices.Clone(a.malformedAt),
		Sources:            slices.Clone(a.sources),
		SourcesOmitted:     a.sourcesOmitted,
		OmittedAPIs:        a.omittedAPIs,
		KubectlOmitted:     a.kubectlOmitted,
	}
	keys := make([]callerKey, 0, len(a.callers))
	for k := range a.callers {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y callerKey) int {
		return cmp.Or(cmp.Compare(a.callers[y].count, a.callers[x].count), compareCallers(x, y))
	})
	rows := make(map[apiKey]*omittedAPI, len(a.omitted))
	for k, o := range a.omitted {
		row := *o
		rows[k] = &row
	}
	for i, k := range keys {
		c := a.callers[k]
		if i < inventory.MaxAuditCallers {
			s.Callers = append(s.Callers, c.row(k))
			continue
		}
		o := omittedAPI{callers: 1, calls: c.count, removedRelease: c.removedRelease, last: c.last}
		addOmitted(rows, k.api, o, func() bool { return true }, &s.OmittedAPIs)
	}
	s.Omitted = omittedRows(rows)
	s.Kubectl = a.kubectlRows()
	return s
}

func (c *caller) row(k callerKey) inventory.AuditCaller {
	ranges := slices.Clone(c.ranges)
	slices.Sort(ranges)
	return inventory.AuditCaller{
		Group: k.api.group, Version: k.api.version, Resource: k.api.resource, Subresource: k.api.subresource,
		Verb: k.verb, User: k.user, ServiceAccount: serviceAccount(k.user), UserAgent: k.userAgent,
		SourceRanges: ranges, SourceRangesOmitted: c.rangesOmitted,
		RemovedRelease: c.removedRelease, Count: c.count, FirstSeen: c.first, LastSeen: c.last,
	}
}

// serviceAccount is "namespace/name" for a service account's user name
// ("system:serviceaccount:ops:reporter"), else "".
func serviceAccount(user string) string {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return ""
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok || ns == "" || name == "" || strings.Contains(name, ":") {
		return ""
	}
	return ns + "/" + name
}

func omittedRows(rows map[apiKey]*omittedAPI) []inventory.AuditOmitted {
	keys := make([]apiKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareAPIs)
	var out []inventory.AuditOmitted
	for _, k := range keys {
		o := rows[k]
		out = append(out, inventory.AuditOmitted{
			Group: k.group, Version: k.version, Resource: k.resource, Subresource: k.subresource,
			Callers: o.callers, Calls: o.calls, RemovedRelease: o.removedRelease, LastSeen: o.last,
		})
	}
	return out
}

// kubectlRows lists the kubectl versions, the most used first, then by version.
func (a *Aggregator) kubectlRows() []inventory.KubectlClient {
	versions := make([]string, 0, len(a.kubectl))
	for v := range a.kubectl {
		versions = append(versions, v)
	}
	slices.SortFunc(versions, func(x, y string) int {
		return cmp.Or(cmp.Compare(a.kubectl[y].count, a.kubectl[x].count), strings.Compare(x, y))
	})
	var out []inventory.KubectlClient
	for _, v := range versions {
		k := a.kubectl[v]
		users := slices.Clone(k.users)
		slices.Sort(users)
		out = append(out, inventory.KubectlClient{
			Version: v, Count: k.count, Users: users, UsersOmitted: k.usersOmitted, LastSeen: k.last,
		})
	}
	return out
}

// State is an aggregation as it stands, to be continued later (the server's, across
// webhook batches): unlike Section it folds nothing, so a caller kept but past the callers
// listed is still told apart from a new one when it calls again. Callers are every caller
// kept (at most inventory.MaxAuditTracked); Omitted rows hold only the calls of callers
// past them (Untracked); the rest are the section's counters. Its JSON is what the server
// stores.
type State struct {
	Events             int64                     `json:"events"`
	Requests           int64                     `json:"requests"`
	DeprecatedRequests int64                     `json:"deprecatedRequests"`
	OwnReads           int64                     `json:"ownReads,omitempty"`
	Malformed          int64                     `json:"malformed,omitempty"`
	MalformedAt        []string                  `json:"malformedAt,omitempty"`
	Sources            []inventory.AuditSource   `json:"sources,omitempty"`
	SourcesOmitted     int                       `json:"sourcesOmitted,omitempty"`
	Callers            []inventory.AuditCaller   `json:"callers,omitempty"`
	Untracked          int64                     `json:"untracked,omitempty"`
	Omitted            []inventory.AuditOmitted  `json:"omitted,omitempty"`
	OmittedAPIs        int64                     `json:"omittedApis,omitempty"`
	Kubectl            []inventory.KubectlClient `json:"kubectl,omitempty"`
	KubectlOmitted     int64                     `json:"kubectlOmitted,omitempty"`
}

// State is a's aggregation so far, in a deterministic order (callers by key). State does
// not change a.
func (a *Aggregator) State() *State {
	s := &State{
		Events: a.events, Requests: a.requests, DeprecatedRequests: a.deprecated, OwnReads: a.ownReads,
		Malformed: a.malformed, MalformedAt: slices.Clone(a.malformedAt),
		Sources: slices.Clone(a.sources), SourcesOmitted: a.sourcesOmitted,
		Untracked: a.untracked, OmittedAPIs: a.omittedAPIs, KubectlOmitted: a.kubectlOmitted,
		Omitted: omittedRows(a.omitted), Kubectl: a.kubectlRows(),
	}
	keys := make([]callerKey, 0, len(a.callers))
	for k := range a.callers {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareCallers)
	for _, k := range keys {
		s.Callers = append(s.Callers, a.callers[k].row(k))
	}
	return s
}

// ResumeState continues counting into a state State answered, with the window starting at
// since. ResumeState(a.State(), since) counts on as a would have. A state past the
// aggregation's bounds (not one State answered) is kept within them: the callers past
// MaxAuditTracked are counted as untracked.
func ResumeState(s *State, since time.Time) *Aggregator {
	a := NewAggregator(since)
	if s == nil {
		return a
	}
	a.events, a.requests, a.deprecated, a.ownReads = s.Events, s.Requests, s.DeprecatedRequests, s.OwnReads
	a.malformed, a.malformedAt = s.Malformed, slices.Clone(s.MalformedAt)
	a.sources, a.sourcesOmitted = slices.Clone(s.Sources), s.SourcesOmitted
	a.untracked, a.omittedAPIs, a.kubectlOmitted = s.Untracked, s.OmittedAPIs, s.KubectlOmitted
	for _, o := range s.Omitted {
		k := apiKey{o.Group, o.Version, o.Resource, o.Subresource}
		a.kept += k.size()
		a.omitted[k] = &omittedAPI{callers: o.Callers, calls: o.Calls, removedRelease: o.RemovedRelease, last: o.LastSeen}
	}
	for _, c := range s.Callers {
		a.resumeCaller(c)
	}
	for _, k := range s.Kubectl {
		a.kept += len(k.Version)
		for _, u := range k.Users {
			a.kept += len(u)
		}
		a.kubectl[k.Version] = &kubectlVersion{count: k.Count, users: slices.Clone(k.Users), usersOmitted: k.UsersOmitted, last: k.LastSeen}
	}
	return a
}

func (a *Aggregator) resumeCaller(c inventory.AuditCaller) {
	k := callerKey{apiKey{c.Group, c.Version, c.Resource, c.Subresource}, c.Verb, c.User, c.UserAgent}
	if len(a.callers) >= inventory.MaxAuditTracked {
		a.untracked += c.Count
		a.omit(k.api, omittedAPI{calls: c.Count, removedRelease: c.RemovedRelease, last: c.LastSeen}, false)
		return
	}
	a.kept += k.size() + len(c.RemovedRelease)
	for _, r := range c.SourceRanges {
		a.kept += len(r)
	}
	a.callers[k] = &caller{
		ranges: slices.Clone(c.SourceRanges), rangesOmitted: c.SourceRangesOmitted,
		removedRelease: c.RemovedRelease, count: c.Count, first: c.FirstSeen, last: c.LastSeen,
	}
}

// Capability says what the aggregation saw, under inventory.CapAuditLog: partial when
// records were malformed or callers past the tracked bound were only counted; not available
// when no audit event was read (an empty log, or one of malformed records), which would
// otherwise pass for a log in which nobody calls a deprecated API.
func (a *Aggregator) Capability() inventory.Capability {
	if a.events == 0 {
		why := "no record read"
		if a.malformed > 0 && len(a.malformedAt) > 0 {
			why = fmt.Sprintf("%d malformed record(s) (first: %s)", a.malformed, a.malformedAt[0])
		}
		return inventory.Capability{Reason: inventory.BoundString("the audit log holds no audit event: " + why)}
	}
	var reasons []string
	if a.malformed > 0 && len(a.malformedAt) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d malformed record(s) skipped (first: %s)", a.malformed, a.malformedAt[0]))
	}
	if a.untracked > 0 {
		reasons = append(reasons, fmt.Sprintf("%d call(s) by callers past the %d tracked counted only per API", a.untracked, inventory.MaxAuditTracked))
	}
	c := inventory.Capability{Available: true}
	if len(reasons) > 0 {
		c.Partial, c.Reason = true, inventory.BoundString(strings.Join(reasons, "; "))
	}
	return c
}
