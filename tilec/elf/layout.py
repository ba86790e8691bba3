"""Place loaded sections into PT_LOAD segments the way ld.lld does for code objects: the first segment maps the
ELF and program headers from offset 0; each later one starts on a fresh page (so no page holds two
permissions) at an address congruent to its file offset modulo the page size, so the file needs no padding to
page boundaries. NOBITS sections take address space but no file bytes."""
from __future__ import annotations

from . import constants as C
from .writer import OutSegment, align_up


def place_segments(loads, header_size: int):
    """``loads``: [(PF_* flags, [OutSection])], non-empty groups in file order; sets each section's ``addr`` and
    ``offset``. Returns (the PT_LOAD segments, the file offset after the last loaded byte)."""
    offset = vaddr = header_size
    segments = []
    for k, (flags, secs) in enumerate(loads):
        page = max([C.PAGE_SIZE] + [s.align for s in secs])
        if k == 0:
            seg_off, seg_vaddr = 0, 0
        else:
            offset = align_up(offset, secs[0].align)
            vaddr = align_up(vaddr, page) + offset % page
            seg_off, seg_vaddr = offset, vaddr
        for s in secs:
            if s.type == C.SHT_NOBITS:
                vaddr = align_up(vaddr, s.align)
                s.addr, s.offset = vaddr, offset
                vaddr += s.mem_size
                continue
            pad = align_up(vaddr, s.align) - vaddr
            offset, vaddr = offset + pad, vaddr + pad
            s.addr, s.offset = vaddr, offset
            offset += s.file_size
            vaddr += s.file_size
        end = max((s.offset + s.file_size for s in secs if s.type != C.SHT_NOBITS), default=seg_off)
        segments.append(OutSegment(C.PT_LOAD, flags, seg_off, seg_vaddr, end - seg_off, vaddr - seg_vaddr, page))
    return segments, offset
