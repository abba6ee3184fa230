# syntax=docker/dockerfile:1
# upgradescope's image: the release binary on distroless's static base, running as the
# nonroot user (65532) with no shell. `make image` builds the same image without a Docker
# engine (tools/image); both build the binary with hack/build-static.sh.
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) -t upgradescope .

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# TARGETOS/TARGETARCH come from BuildKit (docker buildx build --platform ...); without
# them the binary is built for the build machine.
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ARG COMMIT=
RUN GOOS=$TARGETOS GOARCH=$TARGETARCH VERSION=$VERSION COMMIT=$COMMIT \
    hack/build-static.sh /out/upgradescope

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG COMMIT=
LABEL org.opencontainers.image.title=upgradescope \
      org.opencontainers.image.source=https://github.com/upgradescope/upgradescope \
      org.opencontainers.image.version=$VERSION \
      org.opencontainers.image.revision=$COMMIT \
      org.opencontainers.image.licenses=Apache-2.0
COPY --from=build /out/upgradescope /upgradescope
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/upgradescope"]
