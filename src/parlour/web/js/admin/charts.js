// The dashboard's charts: the columns of GET /api/admin/dashboard drawn with uPlot (vendored
// in web/vendor/uplot), one small chart per figure, redrawn from scratch at each refresh.
import uPlot from "../../vendor/uplot/uPlot.esm.js";
import { node } from "../dom.js";

const FIGURES = [
  ["connections", "Connections", ""],
  ["players", "Players online", ""],
  ["games", "Games in progress", ""],
  ["moves_per_second", "Moves per second", "/s"],
  ["commits_per_second", "Store commits per second", "/s"],
  ["request_p99", "p99 request latency", "s"],
  ["store_p99", "p99 store commit latency", "s"],
  ["errors_per_second", "Errors per second", "/s"],
];

let plots = [];

export function draw(container, samples) {
  for (const plot of plots) plot.destroy();
  plots = [];
  container.replaceChildren();
  const at = samples.at || [];
  const width = Math.max(260, Math.min(560, container.clientWidth - 24));
  for (const [key, title, unit] of FIGURES) {
    const box = node("figure", { class: "chart", "data-testid": `chart-${key}` }, node("h3", {}, title));
    container.append(box);
    const values = (samples[key] || []).map((v) => (v === null ? null : v));
    const options = {
      width, height: 160,
      scales: { x: { time: true } },
      legend: { show: false },
      series: [{}, { label: title, stroke: "#1d6b5c", fill: "rgba(29,107,92,0.12)", width: 1.5, value: (_, v) => (v == null ? "-" : `${v}${unit}`) }],
      axes: [{}, { size: 56 }],
    };
    plots.push(new uPlot(options, [at, values], box));
  }
  if (!at.length) container.prepend(node("p", { class: "fine", "data-testid": "charts-empty" }, "No sample yet: the first comes 10 seconds after the start."));
}
