"""Args pieces several plugins share (upstream api.Namespaces, label selectors)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from descheduler.framework.interface import PluginArgs
from minik3s.api.selectors import LabelSelector, label_selector_from_dict


class Namespaces(PluginArgs):
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one(self) -> Namespaces:
        if self.include and self.exclude:
            raise ValueError("only one of Include/Exclude namespaces can be set")
        return self


def compile_selector(raw: dict[str, Any] | None) -> LabelSelector | None:
    """None when unset (matches every pod), else the compiled selector; ValueError if invalid."""
    if raw is None:
        return None
    return label_selector_from_dict(raw)


class SelectorArgs(PluginArgs):
    """Plugins taking `namespaces` and `labelSelector` (upstream validation rejects a bad selector)."""

    namespaces: Namespaces | None = None
    label_selector: dict[str, Any] | None = Field(None, alias="labelSelector")

    @field_validator("label_selector")
    @classmethod
    def _sel(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        compile_selector(v)
        return v

    def selector(self) -> LabelSelector | None:
        return compile_selector(self.label_selector)
