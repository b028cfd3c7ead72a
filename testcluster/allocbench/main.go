// Command allocbench runs the scheduler's structured allocator
// (k8s.io/dynamic-resource-allocation/structured, the version testcluster/go.mod pins) on
// scenario files, the anchor drawb's allocator is measured against.
//
// A scenario file is JSON:
//
//	{"claims": [ResourceClaim...], "node": Node or null, "slices": [ResourceSlice...],
//	 "classes": [DeviceClass...], "allocated": [ResourceClaim...], "features": {"DRAAdminAccess": true, ...}}
//
// For each file it prints one JSON line: the verdict ("allocated", "unschedulable" or "error"),
// the allocation results or the error text, and the time one node's allocation takes
// (NewAllocator plus Allocate, as the scheduler's PreFilter and Filter do for one node), as the
// median of -rounds rounds of at least -min-time each.
//
//	allocbench [-rounds 5] [-min-time 200ms] FILE...
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

type scenario struct {
	Claims    []*resourceapi.ResourceClaim `json:"claims"`
	Node      *v1.Node                     `json:"node"`
	Slices    []*resourceapi.ResourceSlice `json:"slices"`
	Classes   []*resourceapi.DeviceClass   `json:"classes"`
	Allocated []*resourceapi.ResourceClaim `json:"allocated"`
	Features  map[string]bool              `json:"features"`
}

type report struct {
	File          string                         `json:"file"`
	Verdict       string                         `json:"verdict"`
	Allocation    []resourceapi.AllocationResult `json:"allocation,omitempty"`
	Error         string                         `json:"error,omitempty"`
	NsPerNode     float64                        `json:"ns_per_node"`
	RoundsNs      []float64                      `json:"rounds_ns"`
	CallsPerRound int                            `json:"calls_per_round"`
}

// classes is the DeviceClassLister the allocator reads classes from.
type classes map[string]*resourceapi.DeviceClass

func (c classes) List() ([]*resourceapi.DeviceClass, error) {
	out := make([]*resourceapi.DeviceClass, 0, len(c))
	for _, class := range c {
		out = append(out, class)
	}
	return out, nil
}

func (c classes) Get(name string) (*resourceapi.DeviceClass, error) {
	if class, ok := c[name]; ok {
		return class, nil
	}
	return nil, fmt.Errorf("deviceclass %q not found", name)
}

func features(gates map[string]bool) structured.Features {
	return structured.Features{
		AdminAccess:          gates["DRAAdminAccess"],
		ConsumableCapacity:   gates["DRAConsumableCapacity"],
		DeviceBinding:        gates["DRADeviceBindingConditions"],
		DeviceStatus:         gates["DRAResourceClaimDeviceStatus"],
		DeviceTaints:         gates["DRADeviceTaints"],
		PartitionableDevices: gates["DRAPartitionableDevices"],
		PrioritizedList:      gates["DRAPrioritizedList"],
	}
}

// allocatedState is what the scheduler's claim tracker gathers from allocated claims:
// devices allocated without admin access are in use; shared ones count by share ID.
func allocatedState(claims []*resourceapi.ResourceClaim, consumable bool) structured.AllocatedState {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			if result.AdminAccess != nil && *result.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
			if consumable && result.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, result.ShareID))
				if result.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, result.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(id)
		}
	}
	return state
}

type runner struct {
	sc       scenario
	features structured.Features
	state    structured.AllocatedState
	classes  classes
	cache    *cel.Cache
}

func newRunner(sc scenario) *runner {
	f := features(sc.Features)
	r := &runner{sc: sc, features: f, state: allocatedState(sc.Allocated, f.ConsumableCapacity), classes: classes{},
		cache: cel.NewCache(10, cel.Features{EnableConsumableCapacity: f.ConsumableCapacity})}
	for _, class := range sc.Classes {
		r.classes[class.Name] = class
	}
	return r
}

// once is one node's allocation: NewAllocator (the scheduler's PreFilter) and Allocate (its Filter).
func (r *runner) once(ctx context.Context) ([]resourceapi.AllocationResult, error) {
	allocator, err := structured.NewAllocator(ctx, r.features, r.state, r.classes, r.sc.Slices, r.cache)
	if err != nil {
		return nil, err
	}
	return allocator.Allocate(ctx, r.sc.Node, r.sc.Claims)
}

func median(values []float64) float64 {
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	return sorted[len(sorted)/2]
}

func run(path string, rounds int, minTime time.Duration) (report, error) {
	out := report{File: path}
	data, err := os.ReadFile(path)
	if err != nil {
		return out, err
	}
	var sc scenario
	if err := json.Unmarshal(data, &sc); err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	r := newRunner(sc)
	ctx := context.Background()
	result, err := r.once(ctx)
	switch {
	case err != nil:
		out.Verdict, out.Error = "error", err.Error()
	case result == nil:
		out.Verdict = "unschedulable"
	default:
		out.Verdict, out.Allocation = "allocated", result
	}
	calls := 1
	for rounds > 0 {
		start := time.Now()
		for i := 0; i < calls; i++ {
			_, _ = r.once(ctx)
		}
		if elapsed := time.Since(start); elapsed >= minTime || calls >= 1<<20 {
			break
		}
		calls *= 2
	}
	for i := 0; i < rounds; i++ {
		start := time.Now()
		for j := 0; j < calls; j++ {
			_, _ = r.once(ctx)
		}
		out.RoundsNs = append(out.RoundsNs, float64(time.Since(start).Nanoseconds())/float64(calls))
	}
	if rounds > 0 {
		out.CallsPerRound = calls
		out.NsPerNode = median(out.RoundsNs)
	}
	return out, nil
}

func main() {
	rounds := flag.Int("rounds", 5, "timed rounds per file, the median is reported (0: only the verdict)")
	minTime := flag.Duration("min-time", 200*time.Millisecond, "least time one round takes")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: allocbench [-rounds N] [-min-time D] SCENARIO.json...")
		os.Exit(2)
	}
	encoder := json.NewEncoder(os.Stdout)
	for _, path := range flag.Args() {
		out, err := run(path, *rounds, *minTime)
		if err != nil {
			fmt.Fprintf(os.Stderr, "allocbench: %v\n", err)
			os.Exit(1)
		}
		if err := encoder.Encode(out); err != nil {
			fmt.Fprintf(os.Stderr, "allocbench: %v\n", err)
			os.Exit(1)
		}
	}
}
