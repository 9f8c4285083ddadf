// deskscore view: the marks' coordinate space, when the run does not name its screen size,
// is the screenshot's own (known once the image has loaded).
document.querySelectorAll('.shot img').forEach(function (img) {
  function fit() {
    var svg = img.parentNode.querySelector('svg.marks');
    if (svg && !svg.getAttribute('viewBox') && img.naturalWidth) {
      svg.setAttribute('viewBox', '0 0 ' + img.naturalWidth + ' ' + img.naturalHeight);
      svg.querySelectorAll('circle').forEach(function (c) {
        c.setAttribute('r', String(Math.max(4, img.naturalWidth / 55)));
      });
    }
  }
  if (img.complete) { fit(); } else { img.addEventListener('load', fit); }
});
