/* Every figure a cell draws opens at full size when clicked (issue 23, item 6): the
 * image is wrapped in a link to its own file, which the browser shows unscaled.
 * Nothing is fetched; the link points at the image beside the page. */
document.addEventListener("DOMContentLoaded", () => {
  for (const img of document.querySelectorAll("article.bd-article .cell_output img")) {
    if (img.closest("a")) continue;
    const link = document.createElement("a");
    link.href = img.getAttribute("src");
    link.className = "figure-full-size";
    link.title = "Open the figure at full size";
    img.replaceWith(link);
    link.appendChild(img);
  }
});
