// Templates in hooks/ are embedded into the binary as text (`import x from "…" with { type: "text" }`).
declare module "*.md" {
  const text: string;
  export default text;
}
declare module "*.sh" {
  const text: string;
  export default text;
}
// The dashboard's styles (src/web/style.css) are embedded the same way.
declare module "*.css" {
  const text: string;
  export default text;
}
