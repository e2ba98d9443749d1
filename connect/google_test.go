package connect_test

import (
	"encoding/json"
	"testing"

	"github.com/meetingbot/meetingbot/connect"
)

func googleClient(t *testing.T, clientJSON []byte) connect.GoogleClient {
	t.Helper()
	var f struct {
		Web struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
			AuthURI      string `json:"auth_uri"`
			TokenURI     string `json:"token_uri"`
		} `json:"web"`
	}
	if err := json.Unmarshal(clientJSON, &f); err != nil {
		t.Fatal(err)
	}
	return connect.GoogleClient{ID: f.Web.ClientID, Secret: f.Web.ClientSecret, AuthURI: f.Web.AuthURI, TokenURI: f.Web.TokenURI}
}
