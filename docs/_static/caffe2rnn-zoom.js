/* caffe2rnn docs: every diagram opens full size in a pan/zoom viewer.
   Diagrams are SVG images laid out for the text column (width="page"); a
   click opens their full-size drawing in the viewer at 100 % (drag to pan,
   wheel or +/- to zoom, 0 to fit, Esc or x to close). The full-size drawing
   is the image's link target (concept pages: <a href="..._full.svg">) or,
   in a notebook's output, the image in the figure's "full size" box. A
   small "click to enlarge" line under each diagram says so. */
(function () {
  "use strict";

  function open(src, alt) {
    var viewer = document.createElement("div");
    viewer.className = "c2r-viewer";
    viewer.setAttribute("role", "dialog");
    viewer.setAttribute("aria-label", alt || "diagram");
    var img = document.createElement("img");
    img.src = src;
    img.alt = alt || "";
    var bar = document.createElement("div");
    bar.className = "c2r-bar";
    var scale = 1, x = 16, y = 48, drag = null;
    function apply() {
      img.style.transform = "translate(" + x + "px," + y + "px) scale(" + scale + ")";
    }
    function zoom(factor, cx, cy) {
      cx = cx === undefined ? window.innerWidth / 2 : cx;
      cy = cy === undefined ? window.innerHeight / 2 : cy;
      x = cx - (cx - x) * factor;
      y = cy - (cy - y) * factor;
      scale *= factor;
      apply();
    }
    function fit() {
      var w = img.naturalWidth || 1, h = img.naturalHeight || 1;
      scale = Math.min((window.innerWidth - 32) / w, (window.innerHeight - 64) / h, 1);
      x = 16; y = 48; apply();
    }
    function close() {
      document.removeEventListener("keydown", keys);
      viewer.remove();
    }
    function keys(e) {
      if (e.key === "Escape") { close(); }
      else if (e.key === "+" || e.key === "=") { zoom(1.25); }
      else if (e.key === "-") { zoom(0.8); }
      else if (e.key === "0") { fit(); }
    }
    [["+", function () { zoom(1.25); }], ["\u2212", function () { zoom(0.8); }],
     ["fit", fit], ["100 %", function () { scale = 1; x = 16; y = 48; apply(); }],
     ["\u00d7", close]].forEach(function (b) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = b[0];
      button.addEventListener("click", function (e) { e.stopPropagation(); b[1](); });
      bar.appendChild(button);
    });
    viewer.addEventListener("wheel", function (e) {
      e.preventDefault();
      zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX, e.clientY);
    }, { passive: false });
    viewer.addEventListener("mousedown", function (e) {
      drag = [e.clientX - x, e.clientY - y];
      viewer.style.cursor = "grabbing";
    });
    window.addEventListener("mousemove", function (e) {
      if (drag) { x = e.clientX - drag[0]; y = e.clientY - drag[1]; apply(); }
    });
    window.addEventListener("mouseup", function () {
      drag = null;
      viewer.style.cursor = "grab";
    });
    document.addEventListener("keydown", keys);
    viewer.appendChild(img);
    viewer.appendChild(bar);
    document.body.appendChild(viewer);
    apply();
  }

  function isSvg(src) {
    return /\.svg(\?|#|$)/.test(src || "") || /^data:image\/svg\+xml/.test(src || "");
  }

  /* The full-size drawing of a page-width image: its link's SVG, or the
     image in its figure's "full size" box; else the image itself. */
  function fullSize(img) {
    var link = img.closest("a");
    if (link && isSvg(link.getAttribute("href"))) { return link.href; }
    var figure = img.closest(".c2r-figure");
    var full = figure && figure.querySelector(".c2r-full img");
    if (full && full !== img) { return full.src; }
    return img.currentSrc || img.src;
  }

  /* A small line under a diagram saying a click enlarges it: readers do not
     guess that a figure opens (round-6 review). It is a click target too. */
  function hint(after, show) {
    var next = after.nextElementSibling;
    if (next && next.classList.contains("c2r-zoom-note")) { return; }
    var note = document.createElement("span");
    note.className = "c2r-zoom-note";
    note.textContent = "Click the drawing to enlarge it";
    note.style.display = "block";
    note.style.cursor = "zoom-in";
    note.addEventListener("click", show);
    after.insertAdjacentElement("afterend", note);
  }

  function setUp() {
    document.querySelectorAll("article img, .bd-article img").forEach(function (img) {
      if (!isSvg(img.getAttribute("src")) || img.closest(".c2r-full")) { return; }
      img.classList.add("c2r-zoomable");
      img.title = "click to open full size (drag to pan, wheel to zoom)";
      function show(e) {
        e.preventDefault();
        open(fullSize(img), img.alt);
      }
      img.addEventListener("click", show);
      var link = img.closest("a");
      if (link) { link.addEventListener("click", function (e) { e.preventDefault(); }); }
      hint(link || img, show);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
