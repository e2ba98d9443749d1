package meetingbot_test

import (
	"maps"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/config"
)

// The parts of Kubernetes objects the bot's needs are checked against, as
// the Kubernetes API writes them (apps/v1 Deployment, v1 Service, v1
// PersistentVolumeClaim, v1 Secret).
type (
	k8sMeta struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	}
	k8sProbe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
			Port string `yaml:"port"`
		} `yaml:"httpGet"`
		FailureThreshold int `yaml:"failureThreshold"`
	}
	k8sContainer struct {
		Image   string `yaml:"image"`
		EnvFrom []struct {
			SecretRef struct {
				Name string `yaml:"name"`
			} `yaml:"secretRef"`
		} `yaml:"envFrom"`
		Env []struct {
			Name  string  `yaml:"name"`
			Value *string `yaml:"value"`
		} `yaml:"env"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		ReadinessProbe  *k8sProbe `yaml:"readinessProbe"`
		LivenessProbe   *k8sProbe `yaml:"livenessProbe"`
		SecurityContext struct {
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
			ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
			Capabilities             struct {
				Drop []string `yaml:"drop"`
			} `yaml:"capabilities"`
		} `yaml:"securityContext"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	k8sDeployment struct {
		Kind     string  `yaml:"kind"`
		Metadata k8sMeta `yaml:"metadata"`
		Spec     struct {
			Replicas int `yaml:"replicas"`
			Strategy struct {
				Type string `yaml:"type"`
			} `yaml:"strategy"`
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Template struct {
				Metadata k8sMeta `yaml:"metadata"`
				Spec     struct {
					TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
					SecurityContext               struct {
						RunAsUser    int  `yaml:"runAsUser"`
						RunAsNonRoot bool `yaml:"runAsNonRoot"`
					} `yaml:"securityContext"`
					Containers []k8sContainer `yaml:"containers"`
					Volumes    []struct {
						Name                  string `yaml:"name"`
						PersistentVolumeClaim *struct {
							ClaimName string `yaml:"claimName"`
						} `yaml:"persistentVolumeClaim"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	k8sService struct {
		Kind     string  `yaml:"kind"`
		Metadata k8sMeta `yaml:"metadata"`
		Spec     struct {
			Selector map[string]string `yaml:"selector"`
			Ports    []struct {
				Name       string `yaml:"name"`
				Port       int    `yaml:"port"`
				TargetPort string `yaml:"targetPort"`
			} `yaml:"ports"`
			PublishNotReadyAddresses bool `yaml:"publishNotReadyAddresses"`
		} `yaml:"spec"`
	}
	k8sClaim struct {
		Kind     string  `yaml:"kind"`
		Metadata k8sMeta `yaml:"metadata"`
		Spec     struct {
			AccessModes []string `yaml:"accessModes"`
		} `yaml:"spec"`
	}
	k8sSecret struct {
		Kind       string            `yaml:"kind"`
		Metadata   k8sMeta           `yaml:"metadata"`
		StringData map[string]string `yaml:"stringData"`
	}
)

// readYAML decodes the one YAML document in name into v; keys v does not
// name are ignored (Kubernetes objects have many the test need not read).
func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
}

// port returns the containerPort named name, or 0.
func (c k8sContainer) port(name string) int {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// env returns the container's variables that have a value.
func (c k8sContainer) env() map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		if e.Value != nil {
			env[e.Name] = *e.Value
		}
	}
	return env
}

// dockerfileUID is the uid the image's Dockerfile gives the user bot.
func dockerfileUID(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`adduser [^\n]*-u (\d+)[^\n]* bot\b`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Dockerfile adds no user bot with -u")
	}
	uid, _ := strconv.Atoi(string(m[1]))
	return uid
}

// TestKubernetesManifests checks deploy/kubernetes against what the bot
// needs: the probes on the ports and paths it serves (HTTP_ADDR's and
// METRICS_ADDR's), the volume where DATABASE_PATH is, the image's user,
// every variable one the bot reads, and the environment (the Deployment's
// and the Secret's) a configuration it accepts, for one replica on SQLite
// and for several on PostgreSQL.
func TestKubernetesManifests(t *testing.T) {
	const dir = "deploy/kubernetes/"
	var kustomization struct {
		Resources []string `yaml:"resources"`
	}
	readYAML(t, dir+"kustomization.yaml", &kustomization)
	if want := []string{"pvc.yaml", "deployment.yaml", "service.yaml"}; !slices.Equal(kustomization.Resources, want) {
		t.Errorf("kustomization.yaml resources = %v, want %v (the Secret is made by hand, not from the example)", kustomization.Resources, want)
	}
	var one, many k8sDeployment
	var svc k8sService
	var claim k8sClaim
	var secret k8sSecret
	readYAML(t, dir+"deployment.yaml", &one)
	readYAML(t, dir+"replicas/deployment.yaml", &many)
	readYAML(t, dir+"service.yaml", &svc)
	readYAML(t, dir+"pvc.yaml", &claim)
	readYAML(t, dir+"secret.example.yaml", &secret)

	_, httpPort, err := net.SplitHostPort(config.DefaultHTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	uid := dockerfileUID(t)
	known := func(name string) bool {
		return slices.ContainsFunc(config.Vars, func(v config.Var) bool { return v.Name == name })
	}
	for k := range secret.StringData {
		if !known(k) {
			t.Errorf("secret.example.yaml holds %s, which is none of the bot's variables (config.Vars)", k)
		}
	}
	cal := calendartest.NewServer()
	defer cal.Close()

	for _, d := range []struct {
		file string
		dep  k8sDeployment
	}{{"deployment.yaml", one}, {"replicas/deployment.yaml", many}} {
		spec := d.dep.Spec.Template.Spec
		if len(spec.Containers) != 1 {
			t.Fatalf("%s: %d containers, want 1", d.file, len(spec.Containers))
		}
		c := spec.Containers[0]
		env := c.env()
		for k := range env {
			if !known(k) {
				t.Errorf("%s sets %s, which is none of the bot's variables (config.Vars)", d.file, k)
			}
		}
		_, metricsPort, err := net.SplitHostPort(env["METRICS_ADDR"])
		if err != nil {
			t.Errorf("%s METRICS_ADDR = %q: %v", d.file, env["METRICS_ADDR"], err)
		}
		secretRef := ""
		if len(c.EnvFrom) == 1 {
			secretRef = c.EnvFrom[0].SecretRef.Name
		}
		tests := []struct {
			what      string
			got, want any
		}{
			{"kind", d.dep.Kind, "Deployment"},
			{"selector matches the pod's labels", maps.Equal(d.dep.Spec.Selector.MatchLabels, d.dep.Spec.Template.Metadata.Labels), true},
			{"Service selects its pods", maps.Equal(svc.Spec.Selector, d.dep.Spec.Template.Metadata.Labels), true},
			{"envFrom the example Secret", secretRef, secret.Metadata.Name},
			{"HTTP_ADDR left at its default", env["HTTP_ADDR"], ""},
			{"port http is HTTP_ADDR's", c.port("http"), atoi(t, httpPort)},
			{"port metrics is METRICS_ADDR's", c.port("metrics"), atoi(t, metricsPort)},
			{"readiness probe path", c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet.Path == "/healthz", true},
			{"readiness probe port", c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet.Port == "http", true},
			// /healthz fails for a calendar nobody shared, which a restart
			// cannot fix: liveness asks the private listener for /metrics.
			{"liveness probe path", c.LivenessProbe != nil && c.LivenessProbe.HTTPGet.Path == "/metrics", true},
			{"liveness probe port", c.LivenessProbe != nil && c.LivenessProbe.HTTPGet.Port == "metrics", true},
			{"Service exposes port http", len(svc.Spec.Ports) == 1 && svc.Spec.Ports[0].TargetPort == "http", true},
			{"terminationGracePeriodSeconds above the bot's 10 s stop", spec.TerminationGracePeriodSeconds > 10, true},
			{"runs as the image's user bot", spec.SecurityContext.RunAsUser, uid},
			{"runAsNonRoot", spec.SecurityContext.RunAsNonRoot, true},
			{"allowPrivilegeEscalation false", c.SecurityContext.AllowPrivilegeEscalation != nil && !*c.SecurityContext.AllowPrivilegeEscalation, true},
			{"readOnlyRootFilesystem", c.SecurityContext.ReadOnlyRootFilesystem, true},
			{"drops every capability", slices.Equal(c.SecurityContext.Capabilities.Drop, []string{"ALL"}), true},
		}
		for _, tt := range tests {
			if tt.got != tt.want {
				t.Errorf("%s %s = %v, want %v", d.file, tt.what, tt.got, tt.want)
			}
		}

		// The pod's environment, the Secret's and the Deployment's, with a
		// key the Calendar client can use in place of the example's.
		all := maps.Clone(secret.StringData)
		maps.Copy(all, env)
		all["GOOGLE_CREDENTIALS_JSON"] = string(cal.ServiceAccountJSON())
		mounts := map[string]string{}
		for _, m := range c.VolumeMounts {
			mounts[m.Name] = m.MountPath
		}
		claims := map[string]string{}
		for _, v := range spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				claims[v.Name] = v.PersistentVolumeClaim.ClaimName
			}
		}
		if d.dep.Spec.Replicas == 1 {
			dbDir := path.Dir(env["DATABASE_PATH"])
			volume := ""
			for name, p := range mounts {
				if p == dbDir {
					volume = name
				}
			}
			for _, tt := range []struct {
				what      string
				got, want any
			}{
				{"Recreate: the volume mounts on one node at a time", d.dep.Spec.Strategy.Type, "Recreate"},
				{"DATABASE_PATH's directory is a mounted volume", volume != "", true},
				{"that volume is the claim of pvc.yaml", claims[volume], claim.Metadata.Name},
				{"the claim ReadWriteOnce", slices.Equal(claim.Spec.AccessModes, []string{"ReadWriteOnce"}), true},
			} {
				if tt.got != tt.want {
					t.Errorf("%s %s = %v, want %v", d.file, tt.what, tt.got, tt.want)
				}
			}
			all["DATABASE_PATH"] = filepath.Join(t.TempDir(), "reminders.db")
		} else {
			if d.dep.Spec.Replicas < 2 || d.dep.Spec.Strategy.Type != "RollingUpdate" || len(claims) != 0 {
				t.Errorf("%s: replicas %d, strategy %s, claims %v; want 2 or more, RollingUpdate, no claim: the state is in PostgreSQL", d.file, d.dep.Spec.Replicas, d.dep.Spec.Strategy.Type, claims)
			}
			if v, ok := env["DATABASE_PATH"]; !ok || v != "" {
				t.Errorf("%s DATABASE_PATH = %q (set: %v), want it set to \"\" to empty the image's", d.file, v, ok)
			}
			all["DATABASE_URL"] = "postgres://meetingbot:PASSWORD@db.internal:5432/meetingbot?sslmode=require"
		}
		if _, err := config.Parse(func(k string) string { return all[k] }); err != nil {
			t.Errorf("config.Parse(%s and secret.example.yaml) = %v, want no problem", d.file, err)
		}
	}
	if !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("service.yaml publishNotReadyAddresses = false, want true: a subscription failing must not cut Slack's requests off the one bot")
	}
}
