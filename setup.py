"""ament_python package: flexible-link manipulators and servoconstraint systems for ROS 2."""

from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'flexible_manipulator'


def share(subdir, pattern):
    """Install every file matching ``subdir/pattern`` under ``share/<package>/subdir``."""
    files = sorted(glob(os.path.join(subdir, pattern)))
    return (os.path.join('share', package_name, subdir), files)


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'bench']),
    package_data={package_name: ['nodes/dds_memory.xml']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        share('launch', '*.launch.py'),
        share('config', '*.yaml'),
        share('config', '*.rviz'),
        share('config/models', '*.yaml'),
        share('config/urdf', '*.urdf'),
        share('config/urdf', '*.xacro'),
    ],
    # Runtime Python dependencies (numpy, scipy, transforms3d, PyYAML) come from rosdep in a
    # ROS 2 install and from requirements.txt on the pip-only path (tools/setup_env.sh);
    # listing them here would make colcon's setuptools try to fetch them.
    install_requires=['setuptools'],
    # Running a study on a Ray cluster (sweep --ray ADDRESS): pip install -e '.[ray]'; the
    # trained example (examples/train_residual.py): '.[rl]'. Each extra is a line of
    # requirements*.txt (test/test_manifests.py).
    extras_require={'ray': ['ray>=2.9'], 'rl': ['stable-baselines3>=2.3']},
    zip_safe=True,
    maintainer='flexible_manipulator maintainers',
    maintainer_email='maintainers@flexible-manipulator.invalid',
    description='Flexible-link manipulator and servoconstraint plants with a program-constraint '
                'controller for ROS 2.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'plant = flexible_manipulator.entry_points:plant',
            'controller = flexible_manipulator.entry_points:controller',
            'servo_controller = flexible_manipulator.entry_points:servo_controller',
            'container = flexible_manipulator.entry_points:container',
            'bringup = flexible_manipulator.nodes.bringup:main',
            'record = flexible_manipulator.entry_points:record',
            'plot = flexible_manipulator.recording.figures:main',
            'identify = flexible_manipulator.identification.cli:main',
            'excite = flexible_manipulator.identification.excitation:main',
            'hil_config = flexible_manipulator.hil_config:main',
            'view = flexible_manipulator.entry_points:view',
            'servo_plant = flexible_manipulator.entry_points:servo_plant',
            'compile_kernels = flexible_manipulator.compile_kernels:main',
            'sweep = flexible_manipulator.studies.cli:main',
        ],
    },
)
