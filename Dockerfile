# syntax=docker/dockerfile:1

# Two ways to an image of the same binary:
#   docker build -t meetingbot .
#     builds it here from source, with the release's flags;
#   docker build --target release --build-arg VERSION=v1.0.0 -t meetingbot:v1.0.0 .
#     after .ci/release v1.0.0, copies the release binary
#     dist/v1.0.0/meetingbot-v1.0.0-linux-$TARGETARCH (amd64 or arm64):
#     byte for byte the one SHA256SUMS lists, its version stamped.

# Build a static binary: the SQLite driver is pure Go, so no cgo.
FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/bot ./cmd/bot

# Run as an unprivileged user with CA certificates (Slack and Google are
# reached over TLS) and /data, owned by that user, for the SQLite file.
FROM alpine:3.22 AS runtime
RUN apk add --no-cache ca-certificates su-exec \
 && addgroup -S -g 10001 bot \
 && adduser -S -D -H -u 10001 -G bot bot \
 && mkdir -p /data \
 && chown bot:bot /data
COPY deploy/entrypoint.sh /usr/local/bin/entrypoint
ENV DATABASE_PATH=/data/reminders.db
EXPOSE 8080
# The entrypoint starts as root only to hand a freshly mounted volume (Fly
# mounts it owned by root) to the bot user, then runs the bot as that user.
ENTRYPOINT ["/usr/local/bin/entrypoint"]

# The release binary, as .ci/release wrote it.
FROM runtime AS release
ARG VERSION
ARG TARGETARCH
COPY dist/${VERSION}/meetingbot-${VERSION}-linux-${TARGETARCH} /usr/local/bin/bot

# The default: the binary built above.
FROM runtime
COPY --from=build /out/bot /usr/local/bin/bot
