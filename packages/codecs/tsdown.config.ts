import { libraryBuild } from '../../tooling/tsdown.base.ts';

// Two entries: the public codecs, and `./internal` (the engine's fast paths; not for users).
export default libraryBuild({
  entry: { index: 'src/index.ts', 'internal/index': 'src/internal/index.ts' },
});
