package convert

import "testing"

func TestFlowControlObjectsConvertToV1KeepingTheirSeats(t *testing.T) {
	runStepCases(t, []stepCase{
		{name: "a v1beta3 FlowSchema changes only its apiVersion", in: `
apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: FlowSchema
metadata:
  name: batch-jobs # the example's
spec:
  priorityLevelConfiguration:
    name: workload-low
  matchingPrecedence: 1000
`, want: `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: batch-jobs # the example's
spec:
  priorityLevelConfiguration:
    name: workload-low
  matchingPrecedence: 1000
`},
		{name: "a v1beta1 level's assured shares become nominal shares in v1", in: `
apiVersion: flowcontrol.apiserver.k8s.io/v1beta1
kind: PriorityLevelConfiguration
metadata:
  name: workload-low
spec:
  type: Limited
  limited:
    assuredConcurrencyShares: 20 # seats
    limitResponse:
      type: Reject
`, want: `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: workload-low
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 20 # seats
    limitResponse:
      type: Reject
`},
		{name: "a v1beta2 level's 0 shares are the default 30, written out", in: `
apiVersion: flowcontrol.apiserver.k8s.io/v1beta2
kind: PriorityLevelConfiguration
metadata:
  name: workload-low
spec:
  type: Limited
  limited:
    assuredConcurrencyShares: 0
`, want: `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: workload-low
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 30
`, notes: []string{"assuredConcurrencyShares: 0 means the default in v1beta2"}},
		{name: "a v1beta3 level's 0 shares are 30, which v1 would read as no seats", in: `
apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: PriorityLevelConfiguration
metadata:
  name: workload-low
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 0
    lendablePercent: 50
`, want: `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: workload-low
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 30
    lendablePercent: 50
`, notes: []string{"no nominal seats in v1: written as 30"}},
		{name: "a v1beta3 level kept at 0 by the server's annotation stays at 0", in: `
apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: PriorityLevelConfiguration
metadata:
  name: borrow-only
  annotations:
    flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares: ""
spec:
  type: Limited
  limited:
    borrowingLimitPercent: 100
`, want: `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: borrow-only
spec:
  type: Limited
  limited:
    borrowingLimitPercent: 100
    nominalConcurrencyShares: 0
`, notes: []string{"dropped, as the API server's conversion", "written as 0"}},
		{name: "a v1beta3 level without shares keeps the default it has in both", in: `
apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: PriorityLevelConfiguration
metadata:
  name: exempt-ish
spec:
  type: Exempt
  exempt:
    lendablePercent: 10
`, want: `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: exempt-ish
spec:
  type: Exempt
  exempt:
    lendablePercent: 10
`},
		{name: "a FlowSchema at 1.31 goes to v1beta3 only", target: "1.31", in: `
apiVersion: flowcontrol.apiserver.k8s.io/v1beta2
kind: FlowSchema
metadata:
  name: batch-jobs
spec:
  priorityLevelConfiguration:
    name: workload-low
`, want: `
apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: FlowSchema
metadata:
  name: batch-jobs
spec:
  priorityLevelConfiguration:
    name: workload-low
`},
	})
}
