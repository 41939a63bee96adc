// Small DOM helpers shared by the page's modules.

/** An element with attributes (null, undefined and false leave one out; onclick listens) and
 * children (null and undefined are skipped). */
export function node(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") element.className = value;
    else if (key === "onclick") element.addEventListener("click", value);
    // Through the CSSOM: the pages' Content-Security-Policy refuses style attributes.
    else if (key === "style") element.style.cssText = value;
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "title" || key === "type") element.setAttribute(key, value);
    else element[key] = value;
  }
  for (const child of children) if (child !== null && child !== undefined) element.append(child);
  return element;
}
