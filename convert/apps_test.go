package convert_test

import "testing"

func TestWorkloadsMoveToAppsV1KeepingTheirOldDefaults(t *testing.T) {
	runSteps(t, []stepCase{
		{
			name: "an extensions Deployment without selector gets the template's labels as its selector",
			in: `
apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: a, labels: {team: x}}
spec:
  template:
    metadata:
      labels: {app: a}`,
			want: []string{"apiVersion: apps/v1", "selector:\n    matchLabels:\n      app: a\n  strategy:"},
			note: "defaulted the selector",
		},
		{
			name:   "an extensions Deployment keeps unlimited revision history and no progress deadline, and surges by one",
			in:     "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			want:   []string{"revisionHistoryLimit: 2147483647", "progressDeadlineSeconds: 2147483647", "maxUnavailable: 1", "maxSurge: 1"},
			absent: []string{"25%"},
			note:   "delete the line to take the new default",
		},
		{
			name:   "an extensions Deployment that recreates gets no rolling-update defaults",
			in:     "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  strategy: {type: Recreate}\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			absent: []string{"rollingUpdate", "maxSurge"},
		},
		{
			name: "a set value is never replaced by a default",
			in:   "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  revisionHistoryLimit: 3\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			want: []string{"revisionHistoryLimit: 3"}, absent: []string{"revisionHistoryLimit: 2147483647"},
		},
		{
			name:   "an apps/v1beta1 Deployment keeps two old ReplicaSets",
			in:     "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			want:   []string{"revisionHistoryLimit: 2"},
			absent: []string{"progressDeadlineSeconds", "maxSurge"},
		},
		{
			name:   "a Deployment with rollbackTo is left to a person",
			in:     "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  rollbackTo: {revision: 2}\n  template: {metadata: {labels: {app: a}}}",
			manual: "rollbackTo",
		},
		{
			name: "an extensions DaemonSet keeps replacing pods only on deletion, and its template generation in the annotation",
			in:   "apiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata: {name: a}\nspec:\n  templateGeneration: 4\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			want: []string{"deprecated.daemonset.template.generation: \"4\"", "updateStrategy:\n    type: OnDelete"}, absent: []string{"templateGeneration:"},
		},
		{
			name:   "an extensions DaemonSet that rolls keeps its strategy",
			in:     "apiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata: {name: a}\nspec:\n  updateStrategy: {type: RollingUpdate}\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			absent: []string{"OnDelete"},
		},
		{
			name: "an extensions DaemonSet with only a rollingUpdate keeps OnDelete, which apps/v1 accepts beside it",
			in:   "apiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata: {name: a}\nspec:\n  updateStrategy: {rollingUpdate: {maxUnavailable: 2}}\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			want: []string{"updateStrategy:\n    rollingUpdate:\n      maxUnavailable: 2\n    type: OnDelete"},
			note: "OnDelete is written out",
		},
		{
			name: "null fields are unset to the API server, so their old defaults are written in their place",
			in:   "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  revisionHistoryLimit: null\n  strategy: null\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			want: []string{"revisionHistoryLimit: 2147483647", "strategy:\n    rollingUpdate:\n      maxUnavailable: 1\n      maxSurge: 1"}, absent: []string{"null"},
		},
		{
			name: "a null updateStrategy of an extensions DaemonSet gets OnDelete",
			in:   "apiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata: {name: a}\nspec:\n  updateStrategy: ~\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			want: []string{"updateStrategy:\n    type: OnDelete"}, absent: []string{"~"},
		},
		{
			name: "an apps/v1beta1 StatefulSet keeps OnDelete and gets its labels from the template",
			in:   "apiVersion: apps/v1beta1\nkind: StatefulSet\nmetadata: {name: a}\nspec:\n  serviceName: a\n  template: {metadata: {labels: {app: a}}}",
			want: []string{"type: OnDelete", "labels:\n    app: a\nspec:"},
		},
		{
			name:   "an apps/v1beta2 StatefulSet changes only its apiVersion",
			in:     "apiVersion: apps/v1beta2\nkind: StatefulSet\nmetadata: {name: a}\nspec:\n  serviceName: a\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}",
			want:   []string{"apiVersion: apps/v1"},
			absent: []string{"OnDelete", "updateStrategy"},
		},
	})
}
