// Files embedded with `import x from "..." with { type: "file" }` resolve to a path.
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "*.html" {
  const path: string;
  export default path;
}
declare module "../../assets/*" {
  const path: string;
  export default path;
}
