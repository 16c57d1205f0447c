"""Webhook payloads: one JSON object per delivery, discriminated by ``event``."""

from __future__ import annotations

import base64
import binascii
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

Id = Annotated[str, Field(min_length=1, max_length=512, pattern=r"^[^\s#][^#]*$")]
Name = Annotated[str, Field(min_length=1, max_length=128)]
Status = Literal["current", "deprecated", "draft"]
ContentType = Literal["text/markdown", "text/html", "text/plain", "application/pdf"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DocumentRef(_Strict):
    id: Id
    tenant: Name


class UpsertedDocument(DocumentRef):
    content_type: ContentType = "text/markdown"
    # The source text; for application/pdf, base64 of the file.
    content: str = Field(min_length=1)
    groups: list[Name] = Field(min_length=1)
    title: str | None = None
    url: str = ""
    version: str = "1"
    status: Status = "current"
    effective_from: date | datetime | None = None
    effective_to: date | datetime | None = None

    @model_validator(mode="after")
    def _pdf_is_base64(self) -> UpsertedDocument:
        if self.content_type == "application/pdf":
            try:
                base64.b64decode(self.content, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("content of an application/pdf document must be base64") from None
        return self

    def source_bytes(self) -> bytes:
        if self.content_type == "application/pdf":
            return base64.b64decode(self.content)
        return self.content.encode()


class AccessChange(DocumentRef):
    groups: list[Name] | None = Field(default=None, min_length=1)
    status: Status | None = None

    @model_validator(mode="after")
    def _something_changes(self) -> AccessChange:
        if self.groups is None and self.status is None:
            raise ValueError("document.access_changed needs 'groups', 'status' or both")
        return self


class _Event(_Strict):
    # When the change happened at the source (unix seconds); orders deliveries
    # of one document. Default: the signed timestamp.
    occurred_at: float | None = None


class DocumentUpserted(_Event):
    event: Literal["document.upserted"]
    document: UpsertedDocument


class DocumentDeleted(_Event):
    event: Literal["document.deleted"]
    document: DocumentRef


class DocumentAccessChanged(_Event):
    event: Literal["document.access_changed"]
    document: AccessChange


Payload = Annotated[
    DocumentUpserted | DocumentDeleted | DocumentAccessChanged, Field(discriminator="event")
]
PAYLOAD: TypeAdapter[DocumentUpserted | DocumentDeleted | DocumentAccessChanged] = TypeAdapter(
    Payload
)
