import { libraryBuild } from '../../tooling/tsdown.base.ts';

// Two entries: the public cycle, and `./internal` (its building blocks; not for apps).
export default libraryBuild({
  entry: { index: 'src/index.ts', 'internal/index': 'src/internal/index.ts' },
});
