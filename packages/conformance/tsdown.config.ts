import { libraryBuild } from '../../tooling/tsdown.base.ts';

// Two entries: the runtime-neutral kits, and the Node-only golden-file helper.
export default libraryBuild({
  entry: { index: 'src/index.ts', 'golden/index': 'src/golden/index.ts' },
});
