package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// getFleet reads GET /api/v1/fleet whole, as a dashboard does, and answers its status,
// latency and body (status 0: a transport error).
func getFleet(client *http.Client, base string) (int, time.Duration, []byte) {
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/fleet", nil)
	if err != nil {
		return 0, 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+readToken)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, time.Since(start), nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		return 0, took, nil
	}
	return resp.StatusCode, took, body
}

// reader polls the fleet until the deadline.
func reader(client *http.Client, base string, interval time.Duration, deadline time.Time, res *results) {
	for time.Now().Before(deadline) {
		status, took, body := getFleet(client, base)
		res.read(status, took, len(body))
		if interval > 0 {
			time.Sleep(min(interval, time.Until(deadline)))
		}
	}
}

// verifyFleet reads the fleet once after the run and counts its clusters, targets and
// stored cells, so the report says what the reads were reading.
func verifyFleet(client *http.Client, base string, res *results) error {
	status, _, body := getFleet(client, base)
	if status != http.StatusOK {
		return fmt.Errorf("GET /api/v1/fleet after the run: status %d: %s", status, body)
	}
	var fleet struct {
		Targets  []string `json:"targets"`
		Clusters []struct {
			Cells map[string]*json.RawMessage `json:"cells"`
		} `json:"clusters"`
	}
	if err := json.Unmarshal(body, &fleet); err != nil {
		return fmt.Errorf("GET /api/v1/fleet after the run: %w", err)
	}
	res.fleetClusters, res.fleetTargets, res.fleetBytes = len(fleet.Clusters), fleet.Targets, len(body)
	for _, c := range fleet.Clusters {
		for _, cell := range c.Cells {
			if cell != nil {
				res.fleetCells++
			}
		}
	}
	return nil
}
