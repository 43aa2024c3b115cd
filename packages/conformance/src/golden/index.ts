export { expectGolden } from './expect-golden';
