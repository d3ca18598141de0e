// Copyright 2025 The A2A Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package testutil

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/workqueue"
)

// TestWorkQueue is a mock of [workqueue.Queue].
type TestWorkQueue struct {
	HandlerFn workqueue.HandlerFn
	Payloads  []*workqueue.Payload
	WriteErr  error

	WriteFunc           func(context.Context, *workqueue.Payload) (a2a.TaskID, error)
	RegisterHandlerFunc func(workqueue.HandlerConfig, workqueue.HandlerFn)
}

// Write implements [workqueue.Writer] interface.
func (m *TestWorkQueue) Write(ctx context.Context, payload *workqueue.Payload) (a2a.TaskID, error) {
	if m.WriteFunc != nil {
		return m.WriteFunc(ctx, payload)
	}
	m.Payloads = append(m.Payloads, payload)
	return payload.TaskID, m.WriteErr
}

// RegisterHandler implements [workqueue.Queue] interface.
func (m *TestWorkQueue) RegisterHandler(cfg workqueue.HandlerConfig, fn workqueue.HandlerFn) {
	if m.RegisterHandlerFunc != nil {
		m.RegisterHandlerFunc(cfg, fn)
	}
	m.HandlerFn = fn
}

// NewTestWorkQueue allows to mock execution of work queue operations.
// Without any overrides it defaults to in memory implementation.
func NewTestWorkQueue() *TestWorkQueue {
	return &TestWorkQueue{
		Payloads: make([]*workqueue.Payload, 0),
	}
}

// NewInMemoryWorkQueue is a simple workqueue implementation.
func NewInMemoryWorkQueue() *TestWorkQueue {
	var handler workqueue.HandlerFn
	tq := &TestWorkQueue{
		WriteFunc: func(ctx context.Context, p *workqueue.Payload) (a2a.TaskID, error) {
			go func(ctx context.Context) {
				_, _ = handler(ctx, p)
			}(context.WithoutCancel(ctx))
			return p.TaskID, nil
		},
		RegisterHandlerFunc: func(cc workqueue.HandlerConfig, hf workqueue.HandlerFn) {
			handler = hf
		},
	}
	return tq
}
