# The ontime image: one static binary; `ontime controller` is what
# config/default runs. (Not built by CI here: the development machines have
# no container engine.)
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /ontime ./cmd/ontime

FROM gcr.io/distroless/static:nonroot
COPY --from=build /ontime /ontime
USER 65532:65532
ENTRYPOINT ["/ontime"]
