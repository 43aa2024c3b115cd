import { libraryBuild } from '../../tooling/tsdown.base.ts';

export default libraryBuild();
