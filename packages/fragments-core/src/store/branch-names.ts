/**
 * The name of the next fork of `current`: the base name without its `-vN` suffix, then the first
 * `-vN` (N ≥ 2, the fork number) above every fork number in use. `main` → `main-v2`; from `main-v2`, with
 * `main-v3` taken → `main-v4`.
 */
export function nextBranchName(current: string, existing: Iterable<string>): string {
  const base = baseName(current);
  let highest = 1;
  for (const name of existing) {
    if (!name.startsWith(`${base}-v`)) continue;
    const suffix = name.slice(base.length + 2);
    if (/^[1-9]\d*$/.test(suffix)) highest = Math.max(highest, Number(suffix));
  }
  return `${base}-v${highest + 1}`;
}

function baseName(name: string): string {
  const match = /^(.*)-v[1-9]\d*$/.exec(name);
  return match?.[1] ? match[1] : name;
}
