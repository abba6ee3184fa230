package agent

import (
	"testing"
	"time"
)

func TestTheTickBudgetLeavesCollectionTheRestOfHalfAnInterval(t *testing.T) {
	tests := []struct {
		interval                   time.Duration
		wantDeadline, wantReserved time.Duration
	}{
		{10 * time.Minute, 5 * time.Minute, 30 * time.Second},
		{time.Hour, 5 * time.Minute, 30 * time.Second},
		{4 * time.Minute, 2 * time.Minute, 30 * time.Second},
		{time.Minute, 30 * time.Second, 15 * time.Second},
		{2 * time.Second, 30 * time.Second, 15 * time.Second}, // the tests' tick
	}
	for _, tt := range tests {
		deadline, reserve := Budget(tt.interval)
		if deadline != tt.wantDeadline || reserve != tt.wantReserved {
			t.Errorf("Budget(%s) = %s, %s; want %s, %s", tt.interval, deadline, reserve, tt.wantDeadline, tt.wantReserved)
		}
	}
}
