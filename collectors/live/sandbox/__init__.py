"""The sandbox desktop: an image built offline from Debian packages (build.py), the session
that runs in it (desktop.py: Xvfb, a window manager, the controller) and the controller that
speaks OSWorld's protocol (controller.py). desktop.py and controller.py are copied into the
image and run there with the system python3: they import nothing from deskscore."""
