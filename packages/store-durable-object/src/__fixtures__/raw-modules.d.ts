// Vite's `?raw` imports (the README test reads files as text; workerd has no file system).
declare module '*?raw' {
  const text: string;
  export default text;
}
