# One entry point for every check CI runs: `make check`.
.PHONY: check fmt clippy test loom doc asan

check: fmt clippy test loom doc

fmt:
	cargo fmt --all -- --check

clippy:
	cargo clippy --workspace --all-targets -- -D warnings

test:
	cargo test --workspace --release

# Model-checks the lock-free chain and version install under every interleaving.
loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p centum-engine --release --lib loom

doc:
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

# AddressSanitizer over the engine's tests and its long stress runs. Needs a
# nightly toolchain, so it is not part of `check`.
asan:
	RUSTFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR=target/asan cargo +nightly test -p centum-engine --release --target x86_64-unknown-linux-gnu --tests -- --include-ignored
