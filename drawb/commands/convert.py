"""``convert``: rewrite v1beta1 and v1beta2 DRA manifests to ``resource.k8s.io/v1`` as the API server converts
them, every line it does not change kept byte for byte; a diff, or the files written with ``--out``."""

from __future__ import annotations

from drawb.commands.registry import arg, command
from drawb.errors import UsageError
from drawb.session import Session


@command(
    "convert",
    "Rewrite v1beta1/v1beta2 ResourceClaims, ResourceClaimTemplates, DeviceClasses and ResourceSlices to "
    "resource.k8s.io/v1 as the API server converts them (comments and untouched lines kept); prints a diff.",
    arg("paths", nargs="*", metavar="FILE", help="manifest files or folders (*.yaml, *.yml); - reads standard input"),
    arg("--to", default="v1", choices=["v1"], help="the resource.k8s.io version to write (default: v1)"),
    arg("--out", metavar="PATH", help="write the converted file here (a folder for several inputs) instead of a diff"),
    cell="YAML manifests to convert",
)
def convert(session: Session, args, cell):
    """Convert the manifests; a Conversion (its diff, or the files written)."""
    from drawb.convert.report import convert_files
    from drawb.migrate import read_paths

    if not args.paths and cell is None:
        raise UsageError(f"{session.prog} convert needs manifests: FILE..., or - for standard input",
                         hint=f"e.g. `{session.prog} convert claim.yaml` prints the diff, "
                              f"`{session.prog} convert claim.yaml --out claim-v1.yaml` writes the file")
    if "-" in args.paths and session.prog == "%dra":
        raise UsageError("a notebook has no standard input to read manifests from",
                         hint="put them in the cell: `%%dra convert` with the YAML below it")
    sources = [(s.name, s.text, s.path, s.relative) for s in read_paths(args.paths, keep_line_breaks=True)]
    if cell is not None:
        sources.append(("<cell>", cell, None, "cell.yaml"))
    result = convert_files(sources, args.to)
    if args.out:
        result.export(args.out)
    return result
