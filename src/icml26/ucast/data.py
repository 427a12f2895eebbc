"""Data for U-Cast: a chaotic stand-in for ERA5, a WeatherBench2-style loader, normalisation statistics.

The simulator is 2-D forced Kolmogorov flow (incompressible Navier-Stokes in vorticity form, doubly
periodic, pseudo-spectral) with a passive tracer and a weak stochastic forcing, coarse-grained onto a
"lat-lon" grid. Its dynamics are known exactly, it is chaotic, and coarse-graining plus the stochastic
forcing make the next frame genuinely uncertain given the last two, which is what a probabilistic
forecaster has to learn.

The vertical axis of the periodic box is *labelled* latitude (cell centres from -90 to 90 degrees) so that
the cos-latitude weights of WeatherBench2 can be exercised; the flow itself knows nothing about the sphere.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

logger = logging.getLogger(__name__)

__all__ = [
    "ERA5_UK",
    "WB2_LONG_NAMES",
    "KolmogorovFlow",
    "Normalizer",
    "latitude_weights",
    "load_era5_uk",
    "load_wb2",
    "simulate_dataset",
    "time_forcings",
    "wb2_name",
]

#: The ERA5 hourly 2 m temperature over the UK (March 2019, GRIB) shipped with icml26 (see data/ATTRIBUTION.md).
ERA5_UK = Path(__file__).resolve().parent / "data" / "era5-2mt-2019-03-uk.grib"

#: ECMWF short names (as cfgrib and the CDS NetCDF files spell them) -> WeatherBench2's long names.
WB2_LONG_NAMES = {
    "z": "geopotential",
    "t": "temperature",
    "u": "u_component_of_wind",
    "v": "v_component_of_wind",
    "w": "vertical_velocity",
    "q": "specific_humidity",
    "r": "relative_humidity",
    "t2m": "2m_temperature",
    "d2m": "2m_dewpoint_temperature",
    "u10": "10m_u_component_of_wind",
    "v10": "10m_v_component_of_wind",
    "msl": "mean_sea_level_pressure",
    "sp": "surface_pressure",
    "tp": "total_precipitation",
    "skt": "skin_temperature",
    "sst": "sea_surface_temperature",
    "tcwv": "total_column_water_vapour",
    "lsm": "land_sea_mask",
}

#: File suffixes read as GRIB (through cfgrib).
GRIB_SUFFIXES = (".grib", ".grib1", ".grib2", ".grb", ".grb1", ".grb2")


def wb2_name(name: str) -> tuple[str, int | None]:
    """(WeatherBench2 long name, pressure level or None) of a model variable name.

    ``z_500`` -> ("geopotential", 500); ``geopotential_500`` -> ("geopotential", 500); ``t2m`` ->
    ("2m_temperature", None); names outside :data:`WB2_LONG_NAMES` (``vorticity``) are kept as they are.
    """
    base, level = name, None
    head, _, tail = name.rpartition("_")
    if head and tail.isdigit():
        base, level = head, int(tail)
    return WB2_LONG_NAMES.get(base, base), level


def latitude_weights(lat: np.ndarray) -> np.ndarray:
    """cos(latitude) area weights normalised to mean 1 (WeatherBench2). Poles get weight ~0.

    Parameters
    ----------
    lat : array of shape (n_lat,), degrees in [-90, 90]
    """
    lat = np.asarray(lat, dtype=np.float64)
    if lat.ndim != 1 or lat.size == 0:
        raise ValueError(f"lat must be a non-empty 1-D array, got shape {lat.shape}")
    if np.any(np.abs(lat) > 90 + 1e-9):
        raise ValueError("latitudes must lie in [-90, 90] degrees")
    w = np.clip(np.cos(np.deg2rad(lat)), 0.0, None)
    if w.sum() <= 0:
        raise ValueError("all latitude weights are zero")
    return w / w.mean()


@dataclass
class KolmogorovFlow:
    """Forced 2-D Navier-Stokes (vorticity form) with a passive tracer, pseudo-spectral, doubly periodic.

    Equations on [0, 2pi)^2, with velocity u = (psi_y, -psi_x) and laplace(psi) = -omega::

        d omega/dt + u . grad omega = nu lap omega - drag omega + A sin(k_f y) + sigma dW
        d c/dt     + u . grad c     = kappa lap c - damp c + cos(x) sin(y)

    Heun (RK2) for the nonlinear terms, Crank-Nicolson for diffusion, 2/3 dealiasing; the stochastic
    forcing (white in time, on wavenumbers 1 <= |k| <= 4) is added once per step (Euler-Maruyama).

    Parameters
    ----------
    n : int
        Solver grid points per side (even).
    reynolds : float
        1 / nu. With the defaults (Re 100, drag 0.1, amplitude 3, k_f 4) the flow is chaotic: a 1e-7
        perturbation doubles about every 2 time units.
    drag : float
        Linear (Rayleigh) drag.
    k_forcing : int
        Wavenumber of the Kolmogorov forcing.
    forcing_amplitude : float
        Amplitude A of the forcing A sin(k_f y).
    noise : float
        Amplitude sigma of the stochastic vorticity forcing.
    dt : float
        Solver time step.
    """

    n: int = 64
    reynolds: float = 100.0
    drag: float = 0.1
    k_forcing: int = 4
    forcing_amplitude: float = 3.0
    noise: float = 0.05
    dt: float = 0.04
    kappa: float = 0.01
    tracer_damping: float = 0.05

    def __post_init__(self) -> None:
        if self.n < 8 or self.n % 2:
            raise ValueError(f"n must be an even integer >= 8, got {self.n}")
        if self.reynolds <= 0 or self.dt <= 0:
            raise ValueError("reynolds and dt must be positive")
        k = np.fft.fftfreq(self.n, 1.0 / self.n)
        kr = np.fft.rfftfreq(self.n, 1.0 / self.n)
        self.ky, self.kx = np.meshgrid(k, kr, indexing="ij")  # (n, n//2+1); axis 0 = y (lat), 1 = x (lon)
        self.k2 = self.kx**2 + self.ky**2
        self.k2_inv = np.where(self.k2 > 0, 1.0 / np.where(self.k2 > 0, self.k2, 1.0), 0.0)
        kmax = self.n // 3
        self.dealias = (np.abs(self.kx) <= kmax) & (np.abs(self.ky) <= kmax)
        self.noise_mask = (self.k2 >= 1) & (self.k2 <= 16)
        x = np.arange(self.n) * 2 * np.pi / self.n
        self.y, self.x = np.meshgrid(x, x, indexing="ij")
        self.force_w = np.fft.rfft2(self.forcing_amplitude * np.sin(self.k_forcing * self.y))
        self.force_c = np.fft.rfft2(np.cos(self.x) * np.sin(self.y))

    def _tendency(self, w_h: np.ndarray, c_h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Advection + forcing in spectral space for (B, n, n//2+1) vorticity and tracer."""
        psi_h = w_h * self.k2_inv
        u = np.fft.irfft2(1j * self.ky * psi_h, s=(self.n, self.n))  # u = psi_y
        v = np.fft.irfft2(-1j * self.kx * psi_h, s=(self.n, self.n))  # v = -psi_x
        wx = np.fft.irfft2(1j * self.kx * w_h, s=(self.n, self.n))
        wy = np.fft.irfft2(1j * self.ky * w_h, s=(self.n, self.n))
        cx = np.fft.irfft2(1j * self.kx * c_h, s=(self.n, self.n))
        cy = np.fft.irfft2(1j * self.ky * c_h, s=(self.n, self.n))
        adv_w = np.fft.rfft2(u * wx + v * wy) * self.dealias
        adv_c = np.fft.rfft2(u * cx + v * cy) * self.dealias
        return self.force_w - adv_w - self.drag * w_h, self.force_c - adv_c - self.tracer_damping * c_h

    def step(self, w_h: np.ndarray, c_h: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """One Heun / Crank-Nicolson step of the batch (B, n, n//2+1) in spectral space."""
        nu = 1.0 / self.reynolds
        dt = self.dt
        cn_w = (1 - 0.5 * dt * nu * self.k2) / (1 + 0.5 * dt * nu * self.k2)
        cn_c = (1 - 0.5 * dt * self.kappa * self.k2) / (1 + 0.5 * dt * self.kappa * self.k2)
        fw1, fc1 = self._tendency(w_h, c_h)
        w_p = w_h * cn_w + dt * fw1 / (1 + 0.5 * dt * nu * self.k2)
        c_p = c_h * cn_c + dt * fc1 / (1 + 0.5 * dt * self.kappa * self.k2)
        fw2, fc2 = self._tendency(w_p, c_p)
        w_new = w_h * cn_w + 0.5 * dt * (fw1 + fw2) / (1 + 0.5 * dt * nu * self.k2)
        c_new = c_h * cn_c + 0.5 * dt * (fc1 + fc2) / (1 + 0.5 * dt * self.kappa * self.k2)
        if self.noise > 0:
            xi = rng.standard_normal(w_h.shape) + 1j * rng.standard_normal(w_h.shape)
            # scale so that the physical-space forcing has variance ~ noise^2 * dt per step
            w_new = w_new + self.noise * np.sqrt(dt) * self.n * xi * self.noise_mask
        return w_new, c_new

    def run(self, batch: int, frames: int, every: float, spin_up: float, rng: np.random.Generator) -> np.ndarray:
        """Simulate ``batch`` independent trajectories.

        Returns
        -------
        array of shape (batch, frames, 2, n, n)
            Vorticity and tracer, one frame every ``every`` time units after ``spin_up`` time units.
        """
        if batch < 1 or frames < 1 or every <= 0 or spin_up < 0:
            raise ValueError("batch, frames must be >= 1; every > 0; spin_up >= 0")
        shape = (batch, self.n, self.n)
        low = (self.k2 <= 25) & (self.k2 > 0)  # large-scale, zero-mean random initial state
        w_h = np.fft.rfft2(rng.standard_normal(shape)) * low * 0.5
        c_h = np.fft.rfft2(0.1 * rng.standard_normal(shape)) * low
        per_frame = max(1, round(every / self.dt))
        for _ in range(round(spin_up / self.dt)):
            w_h, c_h = self.step(w_h, c_h, rng)
        out = np.empty((batch, frames, 2, self.n, self.n), dtype=np.float32)
        for f in range(frames):
            out[:, f, 0] = np.fft.irfft2(w_h, s=(self.n, self.n))
            out[:, f, 1] = np.fft.irfft2(c_h, s=(self.n, self.n))
            if f < frames - 1:
                for _ in range(per_frame):
                    w_h, c_h = self.step(w_h, c_h, rng)
        if not np.all(np.isfinite(out)):
            raise FloatingPointError("the simulation blew up; lower dt or raise the resolution")
        return out


def simulate_dataset(
    n_traj: int,
    frames: int,
    *,
    n_grid: int = 16,
    solver_n: int = 32,
    every: float = 1.0,
    spin_up: float = 30.0,
    seed: int = 0,
    noise: float = 0.05,
    dt: float = 0.04,
) -> xr.Dataset:
    """Simulate Kolmogorov-flow trajectories coarse-grained to an ``n_grid x n_grid`` pseudo lat-lon grid.

    Returns
    -------
    xarray.Dataset
        Variables ``vorticity`` and ``tracer`` with dims (trajectory, time, lat, lon); a static field
        ``forcing_pattern`` (lat, lon); coordinates ``lat`` (cell centres, degrees) and ``lon``.
    """
    if solver_n % n_grid:
        raise ValueError(f"solver_n ({solver_n}) must be a multiple of n_grid ({n_grid})")
    rng = np.random.default_rng(seed)
    sim = KolmogorovFlow(n=solver_n, noise=noise, dt=dt)
    raw = sim.run(n_traj, frames, every, spin_up, rng)  # (B, T, 2, n, n)
    f = solver_n // n_grid
    coarse = raw.reshape(n_traj, frames, 2, n_grid, f, n_grid, f).mean(axis=(4, 6))  # block average
    lat = -90 + (np.arange(n_grid) + 0.5) * 180.0 / n_grid
    lon = np.arange(n_grid) * 360.0 / n_grid
    pattern = np.sin(sim.k_forcing * sim.y).reshape(n_grid, f, n_grid, f).mean(axis=(1, 3))
    dims = ("trajectory", "time", "lat", "lon")
    return xr.Dataset(
        {
            "vorticity": (dims, coarse[:, :, 0]),
            "tracer": (dims, coarse[:, :, 1]),
            "forcing_pattern": (("lat", "lon"), pattern.astype(np.float32)),
        },
        coords={"time": np.arange(frames) * every, "lat": lat, "lon": lon},
        attrs={"source": "icml26.ucast Kolmogorov-flow simulator", "seed": seed, "step": every},
    )


def time_forcings(times: np.ndarray) -> np.ndarray:
    """sin/cos of year progress and day progress (the paper's forcings) for datetime64 times.

    Returns an array of shape (n_times, 4); for non-datetime (simulator) times, shape (n_times, 0).
    """
    times = np.asarray(times)
    if not np.issubdtype(times.dtype, np.datetime64):
        return np.zeros((times.size, 0), dtype=np.float32)
    t = times.astype("datetime64[s]").astype(np.float64)
    year = 365.2425 * 86400.0
    day = 86400.0
    a, b = 2 * np.pi * (t % year) / year, 2 * np.pi * (t % day) / day
    return np.stack([np.sin(a), np.cos(a), np.sin(b), np.cos(b)], axis=-1).astype(np.float32)


@dataclass
class Normalizer:
    """Per-channel statistics: state mean/std and the std of one-step increments ("residual std").

    The network reads ``(x - mean) / std`` and predicts ``(x_{t+1} - x_t) / std / res_std`` (paper: the
    residual in residual-std normalised space).
    """

    mean: np.ndarray  # (C,)
    std: np.ndarray  # (C,)
    res_std: np.ndarray  # (C,) std of normalised increments

    @classmethod
    def fit(cls, fields: np.ndarray) -> Normalizer:
        """Fit on an array of shape (n_traj, time, C, lat, lon) (needs time >= 2)."""
        fields = np.asarray(fields, dtype=np.float64)
        if fields.ndim != 5 or fields.shape[1] < 2:
            raise ValueError(f"fields must have shape (n_traj, time>=2, C, lat, lon), got {fields.shape}")
        mean = fields.mean(axis=(0, 1, 3, 4))
        std = fields.std(axis=(0, 1, 3, 4))
        if np.any(std <= 0):
            raise ValueError("a channel is constant; it cannot be normalised")
        z = (fields - mean[:, None, None]) / std[:, None, None]
        res_std = np.diff(z, axis=1).std(axis=(0, 1, 3, 4))
        res_std = np.where(res_std > 0, res_std, 1.0)
        return cls(mean.astype(np.float32), std.astype(np.float32), res_std.astype(np.float32))

    def to_dict(self) -> dict[str, list[float]]:
        return {"mean": self.mean.tolist(), "std": self.std.tolist(), "res_std": self.res_std.tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> Normalizer:
        return cls(*(np.asarray(d[k], dtype=np.float32) for k in ("mean", "std", "res_std")))


def dataset_to_array(ds: xr.Dataset, variables: list[str]) -> np.ndarray:
    """Stack ``variables`` of a (trajectory?, time, lat, lon) Dataset into (n_traj, time, C, lat, lon)."""
    missing = [v for v in variables if v not in ds]
    if missing:
        raise ValueError(f"variables {missing} are not in the data set (it has {sorted(ds.data_vars)})")
    arrays = []
    for v in variables:
        da = ds[v]
        if "trajectory" not in da.dims:
            da = da.expand_dims("trajectory")
        need = {"trajectory", "time", "lat", "lon"}
        if set(da.dims) != need:
            raise ValueError(f"variable {v!r} has dims {da.dims}; expected (trajectory?, time, lat, lon)")
        arrays.append(da.transpose("trajectory", "time", "lat", "lon").values.astype(np.float32))
    return np.stack(arrays, axis=2)


def _open_dataset(path: Path) -> xr.Dataset:
    """xarray Dataset of a Zarr store, a GRIB file (cfgrib, no index file written) or a NetCDF file."""
    if path.suffix.lower() in GRIB_SUFFIXES:
        try:
            import cfgrib  # noqa: F401  (the xarray engine; the eccodes wheel ships the binary library)
        except ImportError as exc:  # cfgrib imports eccodes, which fails without its library
            raise OSError(
                f"{path.name}: reading GRIB needs cfgrib and eccodes (pip install cfgrib eccodes): {exc}"
            ) from None
        try:
            ds = xr.open_dataset(path, engine="cfgrib", backend_kwargs={"indexpath": ""})
        except Exception as exc:  # eccodes raises its own types for a damaged file
            first = (str(exc).strip().splitlines() or [""])[0][:200]
            raise OSError(f"cannot read {path} as GRIB: {type(exc).__name__}: {first}") from None
        # cfgrib's scalar coordinates (step, surface, a single number) and valid_time = time + step
        scalar = [c for c in ("step", "surface", "heightAboveGround", "valid_time") if c in ds.coords]
        scalar += [c for c in ("number",) if c in ds.coords and c not in ds.dims]
        return ds.drop_vars(scalar)
    try:
        return xr.open_zarr(path) if path.suffix == ".zarr" or path.is_dir() else xr.open_dataset(path)
    except Exception as exc:  # netCDF/zarr raise many types; report one clear line
        raise OSError(f"cannot open {path} as NetCDF/Zarr: {exc}") from exc


def load_era5_uk() -> xr.Dataset:
    """The shipped ERA5 hourly 2 m temperature over the UK, March 2019: ``t2m`` (time 744, lat 33, lon 49), K.

    Contains modified Copernicus Climate Change Service information (2019); see data/ATTRIBUTION.md.
    """
    return load_wb2(ERA5_UK)


def load_wb2(path: str | Path, variables: list[str] | None = None, lazy: bool = False) -> xr.Dataset:
    """Open a WeatherBench2-style NetCDF or Zarr store, or a GRIB file, and validate its layout.

    Accepts ``latitude``/``longitude`` or ``lat``/``lon`` (renamed to ``lat``/``lon``), sorts latitude
    ascending, and keeps variables with dims (..., time, lat, lon), or (lat, lon) for static fields. A
    ``level`` dimension (``isobaricInhPa`` and ``pressure_level`` are read as ``level``) is split into
    ``<var>_<level>`` variables (e.g. ``z_500``) and a ``number`` (ensemble member) dimension becomes
    ``trajectory``. GRIB files (``.grib``, ``.grib2``, ``.grb``) are read through cfgrib (optional: ``pip
    install cfgrib eccodes``) with ECMWF's short names (``t2m``); nothing is written beside them.

    ``lazy=True`` leaves the data on disk (nothing is read but coordinates and static fields; the NaN scan is
    left to the reader of each window, e.g. :class:`icml26.ucast.train.WindowDataset`).

    Raises
    ------
    OSError
        If the file does not exist or cannot be opened.
    ValueError
        If there is no time/lat/lon grid, latitudes are out of range, or data contain NaNs.
    """
    path = Path(path)
    if not path.exists():
        raise OSError(f"no such file or store: {path}")
    ds = _open_dataset(path)
    aliases = {"latitude": "lat", "longitude": "lon", "isobaricInhPa": "level", "pressure_level": "level"}
    ds = ds.rename({k: v for k, v in aliases.items() if k in ds.dims})
    for dim in ("time", "lat", "lon"):
        if dim not in ds.dims:
            raise ValueError(f"{path.name}: expected a {dim!r} dimension, found dims {tuple(ds.dims)}")
    if "number" in ds.dims:
        ds = ds.rename({"number": "trajectory"})
    ds = ds.sortby("lat")
    if float(np.abs(ds.lat).max()) > 90 + 1e-6:
        raise ValueError(f"{path.name}: latitudes outside [-90, 90]")
    out = {}
    names = variables if variables is not None else list(ds.data_vars)
    for name in names:
        base = name.rsplit("_", 1)[0] if name not in ds and "_" in name else name
        if base not in ds:
            raise ValueError(f"{path.name}: no variable {name!r} (has {sorted(ds.data_vars)})")
        da = ds[base]
        if "level" in da.dims:
            levels = [name.rsplit("_", 1)[1]] if base != name else [str(int(v)) for v in da.level.values]
            for lev in levels:
                if int(lev) not in da.level.values.astype(int):
                    raise ValueError(f"{path.name}: variable {base!r} has no level {lev}")
                out[f"{base}_{lev}"] = da.sel(level=int(lev)).drop_vars("level")
        else:
            out[name] = da
    result = xr.Dataset(out)
    for name, da in result.data_vars.items():
        if {"lat", "lon"} - set(da.dims):  # variables without time are static fields (orography, masks)
            raise ValueError(f"{path.name}: variable {name!r} lacks lat/lon dims ({da.dims})")
        if lazy and "time" in da.dims:
            continue
        n_nan = int(np.isnan(da.values).sum())
        if n_nan:
            raise ValueError(f"{path.name}: variable {name!r} has {n_nan} NaN values")
    return result if lazy else result.load()
