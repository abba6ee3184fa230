package kb

// Addon is one entry of the add-on registry as the kb bundle holds it: what the dashboard's
// Knowledge page shows, read from the bundle's data, never from Rego.
type Addon struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	Support        AddonSupport   `json:"support"`
	Lines          []AddonLine    `json:"lines,omitempty"`
	Compat         []AddonCompat  `json:"compat,omitempty"`
	Supersedes     []string       `json:"supersedes,omitempty"`
	Recommendation string         `json:"recommendation,omitempty"`
	Match          map[string]any `json:"match,omitempty"`
}

// AddonSupport is an add-on's support status and its end of life ("unknown" when no
// source gives one).
type AddonSupport struct {
	Status            string   `json:"status"`
	EOL               string   `json:"eol,omitempty"`
	ExtendedEOL       string   `json:"extendedEol,omitempty"`
	ExtendedCondition string   `json:"extendedCondition,omitempty"`
	Citations         []string `json:"citations,omitempty"`
}

// AddonLine is one release line of an add-on.
type AddonLine struct {
	Line       string     `json:"line"`
	EOL        string     `json:"eol,omitempty"`
	Kubernetes *KubeRange `json:"kubernetes,omitempty"`
	Citations  []string   `json:"citations,omitempty"`
}

// AddonCompat is a version interval of an add-on and the Kubernetes minors it supports.
type AddonCompat struct {
	Versions   map[string]string `json:"versions,omitempty"`
	Kubernetes *KubeRange        `json:"kubernetes,omitempty"`
	Citations  []string          `json:"citations,omitempty"`
}

// KubeRange is the Kubernetes minors a line or interval supports, both ends inclusive.
type KubeRange struct {
	Min string `json:"min,omitempty"`
	Max string `json:"max,omitempty"`
}
