package api

import (
	_ "embed"
	"encoding/json"
	"net/http"
)

// openAPI is the OpenAPI 3 document of the API, served at
// /v1/openapi.json. A test checks it against the routes.
//
//go:embed openapi.json
var openAPI []byte

// GET /v1/openapi.json
func serveOpenAPI(*call) (int, any, error) { return http.StatusOK, json.RawMessage(openAPI), nil }
