"""The GPU passes over gir (tir with layouts), one file per pass; each registers its ``Pass`` by name."""
