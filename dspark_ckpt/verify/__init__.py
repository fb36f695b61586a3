"""The torch side of `dspark-ckpt verify`; only the verify command imports these modules (they need torch)."""
