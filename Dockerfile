# syntax=docker/dockerfile:1

# Build a static binary: the SQLite driver is pure Go, so no cgo.
FROM golang:1.26-alpine AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/bot ./cmd/bot

# Run as an unprivileged user with CA certificates (Slack and Google are
# reached over TLS) and /data, owned by that user, for the SQLite file.
FROM alpine:3.22
RUN apk add --no-cache ca-certificates su-exec \
 && addgroup -S -g 10001 bot \
 && adduser -S -D -H -u 10001 -G bot bot \
 && mkdir -p /data \
 && chown bot:bot /data
COPY --from=build /out/bot /usr/local/bin/bot
COPY deploy/entrypoint.sh /usr/local/bin/entrypoint
ENV DATABASE_PATH=/data/reminders.db
EXPOSE 8080
# The entrypoint starts as root only to hand a freshly mounted volume (Fly
# mounts it owned by root) to the bot user, then runs the bot as that user.
ENTRYPOINT ["/usr/local/bin/entrypoint"]
