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

/*
Package a2agrpc provides an A2A gRPC service implementation which can be registered with [grpc.Server].
The implementation performs protobuf translation and delegates the actual method handling to
a transport-agnostic [a2asrv.RequestHandler].

	grpcHandler := a2agrpc.NewHandler(requestHandler)

	s := grpc.NewServer()
	grpcHandler.RegisterWith(s)
	if err := s.Serve(listener); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		log.Fatalf("Server exited with error: %v", err)
	}
*/
package a2agrpc
